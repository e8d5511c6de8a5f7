"""A runner base class in SpareNet's style: the epoch and batch loops live here and call the
subclass's `train_step` through `self`."""


class BaseRunner:
    def __init__(self, config):
        self.config = config
        self.build()

    def build(self):
        raise NotImplementedError

    def train_step(self, batch):
        raise NotImplementedError

    def train(self):
        for batch in self.loader:
            self.train_step(batch)

    def runner(self):
        for epoch in range(self.config["epochs"]):
            self.train()
