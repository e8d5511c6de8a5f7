# reduction-of: yolov5@5081342f04fb train.py:410 GA205
# false: GA205
# quiet: GA205
"""Accumulation over a nominal batch of a loss that is a sum over the images (mean times batch size).

The real code (YOLOv5): `ComputeLoss.__call__` returns `(lbox + lobj + lcls) * bs` with
`bs = tobj.shape[0]` ("loss scaled by batch_size"); the loop backpropagates every batch and steps when
`ni - last_opt_step >= accumulate`, with `accumulate = round(nbs / batch_size)`: the gradient of each
step is that of the loss summed over the nominal 64 images, by design (weight decay is rescaled to
match).

False finding: GA205 suspicious at the backward: "the loss is not divided by their number ... (unless
summing is meant)". The loss is explicitly scaled by a count the engine cannot see the value of: the
author set its scale, as with `loss / accum_steps`; the engine now takes a multiplication by such a
number as a scaling, as it does a division.

Verified with torch 2.13 (CPU): the accumulated gradient of the four batches equals the gradient of
the summed per-image loss over all of them. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
accumulate = 4


def compute_loss(pred, y):
    bs = pred.shape[0]
    return nn.functional.mse_loss(pred, y) * bs


xs, ys = torch.randn(4, 16, 8), torch.randn(4, 16, 2)
total = nn.functional.mse_loss(model(xs.reshape(-1, 8)), ys.reshape(-1, 2), reduction="sum") / 2
want = torch.autograd.grad(total, model.weight)[0]
for i in range(4):
    loss = compute_loss(model(xs[i]), ys[i])
    loss.backward()
    if (i + 1) % accumulate == 0:
        assert torch.allclose(model.weight.grad, want, atol=1e-5)
        opt.step()
        opt.zero_grad()
print("OK")
