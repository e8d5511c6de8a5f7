from fvcore.common.registry import Registry

META_ARCH_REGISTRY = Registry("META_ARCH")


def build_model(cfg):
    """The architecture is named by the configuration: any class registered below."""
    model = META_ARCH_REGISTRY.get(cfg["arch"])(cfg)
    model.to(cfg["device"])
    return model
