# reduction-of: Swin-Transformer@f82860bfb522 kernels/window_process/unit_test.py:119 GA106
# false: GA106
"""A unit test of a fused kernel against its reference: one random input (made with
requires_grad=True), copied for each implementation with `input.clone().detach().requires_grad_()`,
each copy run through one implementation, backward from the same upstream gradient, and the two
input gradients compared.

The real code (Swin-Transformer kernels/window_process/unit_test.py): `copy_one_tensor(input)` makes
`input.clone().detach().requires_grad_(True)`, and the tests call `expected.backward(grad)` on the
reference's output and compare `input1.grad` with the kernel's.

False finding: GA106 confirmed at the copy, "`requires_grad` set on a fresh tensor with no history
from the parameters: `expected` backpropagates into this new leaf only, not into the tensor behind
it". There are no parameters: the copies are what the test differentiates with respect to, on
purpose, and the original input is a plain leaf nothing trains.

Verified with torch 2.13 (CPU): both copies get a gradient and the gradients agree. Prints OK.
"""
import torch


def copy_one_tensor(input, requires_grad=True):
    return input.clone().detach().requires_grad_(requires_grad)


def reference(x, shift):
    return torch.roll(x, shifts=(-shift, -shift), dims=(1, 2)).reshape(-1, 4)


def fused(x, shift):
    return torch.cat([x[:, shift:], x[:, :shift]], dim=1).roll(-shift, dims=2).reshape(-1, 4)


def check_backward():
    input = torch.randn((2, 6, 6, 4), requires_grad=True)
    grad = torch.randn((72, 4))
    input1 = copy_one_tensor(input)
    input2 = copy_one_tensor(input)
    expected = reference(input1, 2)
    expected.backward(grad)
    got = fused(input2, 2)
    got.backward(grad)
    assert input1.grad is not None and input2.grad is not None
    assert torch.allclose(input1.grad, input2.grad)


if __name__ == "__main__":
    torch.manual_seed(0)
    check_backward()
    print("OK")
