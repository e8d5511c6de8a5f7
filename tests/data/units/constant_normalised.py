"""An orthogonality penalty: the identity divided by its own norm has operands that carry no
gradient (a constant, sqrt(C) > 0), and the assignment matrix is normalised with an eps."""
import torch
import torch.nn as nn


class OrthoPenalty(nn.Module):
    def forward(self, s):
        ss = torch.matmul(s.transpose(1, 2), s)
        i_s = torch.eye(ss.size(-1)).type_as(ss)
        return torch.norm(ss / (torch.norm(ss, dim=(-1, -2), keepdim=True) + 1e-9) - i_s / torch.norm(i_s), dim=(-1, -2)).mean()
