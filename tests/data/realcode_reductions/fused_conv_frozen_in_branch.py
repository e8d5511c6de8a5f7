# reduction-of: yolov5@5081342f04fb utils/torch_utils.py:247 GA111
# false: GA111
"""Conv and BatchNorm fused into a new Conv2d built with requires_grad_(False), inside a branch.

The real code (YOLOv5 `Model.fuse`): `for m in self.model.modules(): if isinstance(m, Conv) and
hasattr(m, "bn"): m.conv = fuse_conv_and_bn(m.conv, m.bn)`, where `fuse_conv_and_bn` builds
`nn.Conv2d(...).requires_grad_(False).to(device)` and fills it with `fusedconv.weight.copy_(...)` and
`fusedconv.bias.copy_(...)`.

False finding: GA111 confirmed at both `copy_` calls: "in-place update of 2 parameters ..., leaves that
require grad, outside torch.no_grad(): torch raises". The freeze ran under the `if`, so the engine
took it as "maybe frozen"; but the conv was built after that condition began: wherever it exists it
was frozen, and torch allows in-place changes of leaves that do not require grad.

Verified with torch 2.13 (CPU): fusing runs without error, and the fused block gives the same output
as conv then batch norm in eval mode. Prints OK.
"""
import torch
import torch.nn as nn


def fuse_conv_and_bn(conv, bn):
    fused = (
        nn.Conv2d(conv.in_channels, conv.out_channels, kernel_size=conv.kernel_size, bias=True)
        .requires_grad_(False)
        .to(conv.weight.device)
    )
    w_conv = conv.weight.clone().view(conv.out_channels, -1)
    w_bn = torch.diag(bn.weight.div(torch.sqrt(bn.eps + bn.running_var)))
    fused.weight.copy_(torch.mm(w_bn, w_conv).view(fused.weight.shape))
    b_conv = torch.zeros(conv.weight.size(0)) if conv.bias is None else conv.bias
    b_bn = bn.bias - bn.weight.mul(bn.running_mean).div(torch.sqrt(bn.running_var + bn.eps))
    fused.bias.copy_(torch.mm(w_bn, b_conv.reshape(-1, 1)).reshape(-1) + b_bn)
    return fused


class ConvBN(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return self.bn(self.conv(x)) if hasattr(self, "bn") else self.conv(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(ConvBN(3, 8), nn.ReLU(), ConvBN(8, 8))

    def forward(self, x):
        return self.blocks(x)

    def fuse(self):
        for m in self.blocks.modules():
            if isinstance(m, ConvBN) and hasattr(m, "bn"):
                m.conv = fuse_conv_and_bn(m.conv, m.bn)
                delattr(m, "bn")
        return self


torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = net(torch.randn(4, 3, 12, 12)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
x = torch.randn(2, 3, 12, 12)
with torch.no_grad():
    before = net(x)
net.fuse()
with torch.no_grad():
    after = net(x)
assert torch.allclose(before, after, atol=1e-5)
print("OK")
