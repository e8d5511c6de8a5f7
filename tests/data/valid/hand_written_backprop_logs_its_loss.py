# runtime: skip (no autograd: the gradients are written by hand)
"""A course's network trained with gradients written by hand, as philtabor's MNIST lesson does:
`compute_loss` takes `log(prediction)` and `log(1 - prediction)` of sigmoid outputs, but only to
print the loss; no backward() runs anywhere, so no gradient goes through those logs (the value
printed may be inf; training is unaffected)."""
import torch


def compute_forward_pass(x, w1, w2):
    a2 = torch.sigmoid(w1.matmul(x.T))
    a3 = torch.sigmoid(w2.matmul(a2))
    return a2, a3


def compute_loss(prediction, label):
    term_1 = -1 * label * torch.log(prediction)
    term_2 = (1 - label) * torch.log(1 - prediction)
    return torch.sum(term_1 - term_2)


torch.manual_seed(0)
w1, w2 = torch.randn(16, 8), torch.randn(3, 16)
x, label = torch.randn(32, 8), torch.eye(3)[torch.randint(0, 3, (32,))].T
for epoch in range(5):
    a2, a3 = compute_forward_pass(x, w1, w2)
    print(compute_loss(a3, label).item())
    delta_3 = a3 - label
    delta_2 = w2.T.matmul(delta_3) * a2 * (1 - a2)
    w2 -= 0.01 * delta_3.matmul(a2.T)
    w1 -= 0.01 * delta_2.matmul(x)
