# runtime: trains
"""The valid look-alike of amp_arm_never_clears_flag_from_optional_scaler: both arms of the second
`if use_amp:` clear the gradients after their step."""
import os

import torch
import torch.nn as nn


def train_inner_loop(model, optimizer, loader, scaler=None, accum_grad_iters=1):
    use_amp = scaler is not None
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cpu", enabled=use_amp):
            loss = nn.functional.cross_entropy(model(x), y)
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (i + 1) % accum_grad_iters == 0:
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad()


def train_epoch(model, optimizer, loader, scaler=None):
    return train_inner_loop(model, optimizer, loader, scaler=scaler)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]
    # the task's loop is picked by name from a configuration, as a runner picks it
    globals()[os.environ.get("PICKED", "train_epoch")](
        model, optimizer, loader, scaler=torch.amp.GradScaler("cpu")
    )
