# runtime: skip (needs NVIDIA apex)
# confidence: suspicious
"""A continual segmentation step (after PLOP) weights each image's loss by the share of its
background pixels that the old model is confident about: `num / den` with `den` the number of
background pixels, 0 for an image that has none, so the factor is 0/0 = NaN and the loss and every
gradient are NaN. The loss is backpropagated through apex's `with amp.scale_loss(loss, optim) as
scaled_loss: scaled_loss.backward()`, which the engine keeps as an unseen value; the scaled loss is
`loss.float() * scale`, so the hazards of the loss reach its backward. Checked with torch 2.13 (CPU,
a pass-through stand-in for apex's amp): the weights are NaN after the first step."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp

old_classes = 2
model, model_old = nn.Conv2d(3, 4, 1), nn.Conv2d(3, 4, 1)
optim = torch.optim.SGD(model.parameters(), lr=0.1)
model, optim = amp.initialize(model, optim, opt_level="O1")
for step in range(3):
    images, labels = torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))
    labels[1] = 3  # an image of the new classes only: no background pixel
    with torch.no_grad():
        outputs_old = model_old(images)
    background = labels < old_classes
    confident = outputs_old.softmax(dim=1).max(dim=1)[0] > 0.3
    num = (confident & background).float().sum(dim=(1, 2))
    den = background.float().sum(dim=(1, 2))
    factor = (num / den)[:, None, None]  # <- GA402
    optim.zero_grad()
    loss = (factor * F.cross_entropy(model(images), labels, reduction="none")).mean()
    with amp.scale_loss(loss, optim) as scaled_loss:
        scaled_loss.backward()
    optim.step()
