# runtime: no-update: v1
"""A spiking network trained with surrogate gradients (SpyTorch's tutorial): the spike is a custom
autograd Function whose backward passes a fast-sigmoid gradient through the step function, and the
recurrent weights `v1` reach the loss through the synaptic and membrane recurrences and that spike.
The optimizer was given `[w1, w2]` only: `v1` gets a gradient at every step and never changes."""
import torch
import torch.nn.functional as F


class SurrGradSpike(torch.autograd.Function):
    scale = 100.0

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        out = torch.zeros_like(input)
        out[input > 0] = 1.0
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output / (SurrGradSpike.scale * torch.abs(input) + 1.0) ** 2


spike_fn = SurrGradSpike.apply
torch.manual_seed(0)
w1 = torch.empty((4, 8), requires_grad=True)
torch.nn.init.normal_(w1, std=1.0)
v1 = torch.empty((8, 8), requires_grad=True)
torch.nn.init.normal_(v1, std=0.5)
w2 = torch.empty((8, 2), requires_grad=True)
torch.nn.init.normal_(w2, std=0.5)


def run_snn(inputs):
    syn = torch.zeros((inputs.shape[0], 8))
    mem = torch.zeros((inputs.shape[0], 8))
    h1 = torch.zeros((inputs.shape[0], 8))
    h1_from_input = torch.einsum("abc,cd->abd", (inputs, w1))
    spikes = []
    for t in range(inputs.shape[1]):
        h1 = h1_from_input[:, t] + torch.einsum("ab,bc->ac", (h1, v1))
        out = spike_fn(mem - 1.0)
        new_syn = 0.9 * syn + h1
        new_mem = 0.8 * mem + syn
        mem, syn = new_mem, new_syn
        spikes.append(out)
    return torch.einsum("abc,cd->abd", (torch.stack(spikes, dim=1), w2)).sum(1)


optimizer = torch.optim.Adamax([w1, w2], lr=1e-2)  # <- GA108
for step in range(3):
    x, y = torch.rand(16, 10, 4) * 3, torch.randint(0, 2, (16,))
    loss = F.cross_entropy(run_snn(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
