# reduction-of: code-of-learn-deep-learning-with-pytorch@ea24810dc262 chapter9_Computer-Vision/Deep-Dream/deepdream.py:9 GA101
# false: GA101, GA105
"""Deep dream: the objective function returns the activation's `.data`, which is the gradient of
the L2 objective 0.5 * ||act||^2, and the step passes it as the gradient argument of the
activation's backward (`act_value.backward(diff_out)`); the image, a fresh leaf each iteration,
is then moved along its normalised gradient in place and round-tripped through NumPy
(`.numpy()`) for the jitter shift.

The real code (a book's deep-dream chapter) runs a truncated pretrained CNN up to `end_layer`,
rolls and clips the image in NumPy between iterations and repeats the step over zoomed octaves;
the driver lives in a notebook. Here `demo()` is called through `sys.modules`, which the engine
does not follow, so it analyzes `make_step` with unknown arguments as it does the real file.

False findings: GA101 confirmed at `return dst.data`: "`.data` cuts gradient to `img_variable`...;
`diff_out` then reaches no trainable parameter", and GA105 confirmed at `img_variable.data.numpy()`:
"`diff_out` gets no gradient to `img_variable`". `diff_out` is no loss: it is the
`gradient=` argument of backward(), meant to carry no history. The backward runs from
`act_value`, which does reach the image, and fills `img_variable.grad`. The engine took the
gradient argument for the tensor being differentiated.

Verified with torch 2.13 (CPU): each backward fills a nonzero `img_variable.grad`, the image
changes every iteration and the L2 objective grows. Prints OK.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.ReLU()])

    def forward(self, x, end_layer):
        for layer in self.layers[:end_layer]:
            x = layer(x)
        return x


def objective_L2(dst, guide_features):
    return dst.data


def make_step(img, model, control=None, distance=objective_L2, num_iterations=4, end_layer=2):
    objectives = []
    for i in range(num_iterations):
        img = torch.roll(torch.from_numpy(img), 1, -1).numpy()
        model.zero_grad()
        img_variable = Variable(torch.Tensor(img), requires_grad=True)
        act_value = model.forward(img_variable, end_layer)
        diff_out = distance(act_value, control)
        act_value.backward(diff_out)
        assert img_variable.grad is not None and img_variable.grad.abs().sum() > 0
        objectives.append(0.5 * float((act_value.data ** 2).sum()))
        ratio = float(abs(img_variable.grad.data.numpy()).mean())
        before = img_variable.data.clone()
        img_variable.data.add_(img_variable.grad.data * (2e-2 / ratio))
        assert not torch.equal(before, img_variable.data)
        img = img_variable.data.numpy()
        img = torch.roll(torch.from_numpy(img), -1, -1).numpy()
    assert objectives[-1] > objectives[0], objectives
    return img


def demo():
    torch.manual_seed(0)
    make_step(torch.randn(1, 3, 10, 10).numpy(), Features())
    print("OK")


if __name__ == "__main__":
    import sys
    sys.modules[__name__].demo()
