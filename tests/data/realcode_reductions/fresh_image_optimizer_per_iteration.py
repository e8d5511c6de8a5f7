# reduction-of: pytorch-cnn-visualizations@ba22fa07c9f3 src/generate_regularized_class_specific_samples.py:92 GA201
# false: GA201
"""Class visualisation: each iteration makes the image a new leaf (`Variable(img, requires_grad=True)`
in a preprocessing helper), builds an SGD over it, takes one step and recreates the image from it.

False finding: GA201 confirmed at `optimizer.step()`: "nothing in the loop clears the gradients of
its parameters". The only parameter is the leaf made in this iteration: its gradient starts at
None every time. `Variable(t, requires_grad=True)` is now a leaf; an optimizer over leaves made in
the same iteration is not reported, and an image attribute set on both arms of an if/else is the
new one, not also the old.

Verified with torch 2.13 (CPU): each new leaf's gradient is None before its backward(). Prints OK.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.optim import SGD


def preprocess(image, blur):
    im = image.clone() if not blur else image * 0.9
    return Variable(im, requires_grad=True)


class Visualiser:
    def __init__(self, model):
        self.model = model
        self.model.eval()
        self.created_image = torch.rand(1, 8)

    def generate(self, iterations=6):
        for i in range(1, iterations):
            if i % 3 == 0:
                self.processed_image = preprocess(self.created_image, True)
            else:
                self.processed_image = preprocess(self.created_image, False)
            assert self.processed_image.grad is None
            optimizer = SGD([self.processed_image], lr=6, weight_decay=1e-4)
            class_loss = -self.model(self.processed_image)[0, 1]
            self.model.zero_grad()
            class_loss.backward()
            optimizer.step()
            self.created_image = self.processed_image.detach().clamp(0, 1)


torch.manual_seed(0)
Visualiser(nn.Sequential(nn.Linear(8, 3))).generate()
print("OK")
