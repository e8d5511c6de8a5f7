def set_trainable(module, flag):
    for p in module.parameters():
        p.requires_grad = flag


def count_trainable(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
