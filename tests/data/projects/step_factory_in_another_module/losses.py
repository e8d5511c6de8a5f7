"""The step factory of a score-model trainer: `get_step_fn` returns the closure that runs one
training step. It clears the gradients after backward() and before the optimizer's update."""
import torch


def get_optimize_fn(lr, warmup, grad_clip):
    def optimize_fn(optimizer, params, step):
        if warmup > 0:
            for g in optimizer.param_groups:
                g["lr"] = lr * min(step / warmup, 1.0)
        if grad_clip >= 0:
            torch.nn.utils.clip_grad_norm_(params, max_norm=grad_clip)
        optimizer.step()

    return optimize_fn


def get_step_fn(train, optimize_fn):
    def loss_fn(model, batch):
        noise = torch.randn_like(batch)
        return ((model(batch + noise) + noise) ** 2).mean()

    def step_fn(state, batch):
        model = state["model"]
        if train:
            optimizer = state["optimizer"]
            loss = loss_fn(model, batch)
            loss.backward()
            optimizer.zero_grad()  # <- GA202
            optimize_fn(optimizer, model.parameters(), step=state["step"])
            state["step"] += 1
        else:
            with torch.no_grad():
                loss = loss_fn(model, batch)
        return loss

    return step_fn
