# reduction-of: DN-DETR@1623ec9c272e models/dn_dab_deformable_detr/dab_deformable_detr.py:226 GA110
# false: GA110
"""A detection head's box MLP (the DETR family's `MLP`): its layers are made by a generator over
`zip([d_in] + h, h + [d_out])` with `h = [hidden] * (num_layers - 1)`, and its forward applies a
ReLU after every layer but the last (`F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)`).
The head then adds the reference points into the MLP's output in place (`tmp += reference`).

The real code (DN-DETR, Deformable DETR, DAB-DETR, DINO, DETR's `MLP`): the same MLP and
`tmp += reference` / `tmp[..., :2] += reference` on the box embedding of each decoder layer.

False finding: GA110 confirmed at `tmp += reference`, "in-place change of a tensor that `relu` saved
for backward". The generator's layers were taken for one layer at index 0, so the ReLU arm was
taken for the last layer too; the MLP's output is a Linear's output, which no op saved (the Linear
saves its input), and backward runs.

Verified with torch 2.13 (CPU): the step trains, and the head's output is not a ReLU's. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class BoxHead(nn.Module):
    def __init__(self, d, num_pred):
        super().__init__()
        self.bbox_embed = nn.ModuleList([MLP(d, d, 4, 3) for _ in range(num_pred)])

    def forward(self, hs, reference):
        boxes = []
        for lvl in range(hs.shape[0]):
            tmp = self.bbox_embed[lvl](hs[lvl])
            tmp += reference
            boxes.append(tmp.sigmoid())
        return torch.stack(boxes)


if __name__ == "__main__":
    torch.manual_seed(0)
    head = BoxHead(8, 2)
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in head.parameters()]
    for _ in range(2):
        out = head(torch.randn(2, 5, 8), torch.randn(5, 4))
        loss = F.l1_loss(out, torch.rand(2, 5, 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert out.grad_fn is not None and (head.bbox_embed[0](torch.randn(3, 8)) < 0).any()  # not a ReLU's output
    assert all(not torch.equal(b, p) for b, p in zip(before, head.parameters()))
    print("OK")
