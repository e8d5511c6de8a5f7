# runtime: nonfinite
# confidence: suspicious
"""A segmenter as crop-type-mapping wrote it: `nn.Softmax2d()` over the class channel, then
`torch.log` for NLLLoss. Confident pixels underflow to a probability of exactly 0 for the other
classes: their log is -inf and the gradient NaN. (`nn.Softmax2d` is softmax over dim -3.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.softmax = nn.Softmax2d()

    def forward(self, x):
        preds = self.softmax(self.conv(x))
        return torch.log(preds)  # <- GA401


model = Segmenter()
with torch.no_grad():
    model.conv.weight.mul_(400.0)
opt = torch.optim.Adam(model.parameters())
criterion = nn.NLLLoss()
for _ in range(3):
    x = torch.randn(2, 3, 8, 8)
    y = torch.randint(0, 4, (2, 8, 8))
    loss = criterion(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
