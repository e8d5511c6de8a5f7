# reduction-of: Person_reID_baseline_pytorch@82ff40fb11b7 ODFA.py:40 GA301
# false: GA301
# quiet: GA301
"""An iterative feature attack: the features of the input are computed once before the loop;
each step backpropagates their distance to a target into the input, moves the input, and, unless
it was the last step, computes the features of the new input for the next step.

False finding: GA301 confirmed at the step's backward, "shares part of its graph with a loss
whose backward() already ran": the first features' graph is freed by the first step's backward,
but no later step reads them, since every way through a step assigns `outputs` afresh. A name that
every path through an iteration assigns starts the next iteration with the new value only.

Verified with torch 2.13 (CPU): ten attack steps, each backward succeeding. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def attack(model, img, steps):
    inputs = img.clone().requires_grad_(True)
    outputs = model(inputs)
    outputs = outputs / outputs.norm(dim=1, keepdim=True).clamp_min(1e-6)
    target = -outputs.detach()
    for it in range(steps):
        loss = F.mse_loss(outputs, target)
        loss.backward()
        inputs = (inputs - 0.01 * inputs.grad.sign()).detach().requires_grad_(True)
        if it == steps - 1:
            break
        outputs = model(inputs)
        outputs = outputs / outputs.norm(dim=1, keepdim=True).clamp_min(1e-6)
    return inputs.detach()


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
adversarial = attack(net, torch.randn(5, 6), 10)
assert adversarial.shape == (5, 6)
print("OK")
