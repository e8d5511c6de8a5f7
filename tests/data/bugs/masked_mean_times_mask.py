# runtime: nonfinite
# confidence: suspicious
"""A masked mean over labels that may be missing, with the mask applied by multiplication:
`(loss * mask).sum() / mask.sum()`. A batch with no valid label gives the sum's gradient 1/0 = inf,
and the product's backward multiplies it by the mask: inf * 0 = NaN in every parameter gradient.
(`torch.where(mask, loss, 0)` in place of the product would pass exactly 0 there instead.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCEWithLogitsLoss(reduction="none")
labels = torch.cat([torch.zeros(6, 3), torch.randint(0, 2, (6, 3)).float() * 2 - 1])  # 0 = missing
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(12, 8), labels), batch_size=6)
for epoch in range(2):
    for x, y in loader:
        pred = model(x)
        is_valid = y**2 > 0
        loss_mat = criterion(pred, (y + 1) / 2)
        loss = torch.sum(loss_mat * is_valid) / torch.sum(is_valid)  # <- GA402
        opt.zero_grad()
        loss.backward()
        opt.step()
