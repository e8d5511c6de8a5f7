# reduction-of: diffusers@58eb52c0803e examples/research_projects/controlnet/train_controlnet_webdataset.py:1327 GA409
# false: GA409
# quiet: GA409
"""float16 autocast regions that compute no gradient, in a script that trains in float32.

The real code (diffusers training scripts): the step loop backpropagates a float32 loss; around it,
`with torch.autocast("cuda"):` runs a frozen depth estimator on the conditioning image, validation
runs `with torch.cuda.amp.autocast(): images.append(pipeline(prompt).images[0])`, and a caption helper
runs `with torch.no_grad(), torch.cuda.amp.autocast(): model.generate(...)`.

False finding: GA409 suspicious at each autocast: "float16 autocast in a training step with no
GradScaler: float16 gradients ... underflow". No gradient is computed in these regions: under no_grad
nothing is recorded, and the frozen estimator's output (and the validation samples) never reach the
backward. Only a float16 region whose values reach a backward can underflow a gradient.

Verified with torch 2.13 (CPU, float16 autocast): the three regions run, their outputs do not
require grad, and the float32 training steps (no scaler) change the weights. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
depth = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)).requires_grad_(False)
captioner = nn.Linear(8, 4)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def describe(x):
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        return captioner(x).argmax(-1)


def validate(x):
    outs = []
    with torch.autocast("cpu", dtype=torch.float16):
        with torch.no_grad():
            outs.append(model(torch.cat([x, x], dim=-1)))
    return outs


start = model[0].weight.detach().clone()
for step in range(3):
    cond = torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.float16):
        depth_map = depth(cond)
    assert not depth_map.requires_grad
    control = (depth_map.float() - depth_map.min()).detach()
    loss = nn.functional.mse_loss(model(torch.cat([control, cond], dim=-1)), torch.randn(4, 1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    labels = describe(cond)
    images = validate(cond)
    assert not labels.requires_grad and not images[0].requires_grad
assert not torch.equal(start, model[0].weight)
print("OK")
