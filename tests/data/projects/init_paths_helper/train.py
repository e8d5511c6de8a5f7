# runtime: param-not-optimized
"""A research repository's script: `import _init_paths` runs a helper module that puts lib/ on
sys.path, and the model is imported from there (`from models.net import Net`). The optimizer is
given the backbone's parameters only: the head reaches the loss, gets gradients, and never changes.

Verified with torch 2.13 (CPU), run from any folder: after three steps the backbone's weights
changed and the head's are exactly the initial ones, though its .grad is not zero."""
import _init_paths  # noqa: F401
import torch
import torch.nn.functional as F
from models.net import Net


def main():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.backbone.parameters(), lr=0.1)  # <- GA108
    for _ in range(3):
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
