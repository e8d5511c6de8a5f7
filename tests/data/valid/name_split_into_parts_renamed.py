"""A checkpoint converter's helper (after transformers' TF-to-PyTorch name mapping): the weight's
name is cut with `str.split("/")` and its last part renamed in place. The value's type is not
known where the helper runs on its own, but a list of strings is no view of a tensor."""
import sys

import torch
import torch.nn as nn


def convert_tf_weight_name(tf_name, start_prefix_to_remove=""):
    tf_name = tf_name.replace(":0", "")
    tf_name = tf_name.split("/")
    if len(tf_name) > 1:
        tf_name = tf_name[1:]
    if tf_name[-1] == "kernel" or tf_name[-1] == "gamma":
        tf_name[-1] = "weight"
    if tf_name[-1] == "beta":
        tf_name[-1] = "bias"
    tf_name = ".".join(tf_name)
    if start_prefix_to_remove:
        tf_name = tf_name.replace(start_prefix_to_remove, "", 1)
    return tf_name


def load_tf_weights(model, reader):
    state = {}
    # the reader is a library object the engine does not know: what it returns, given the model,
    # may be anything, a tensor that requires grad included
    for name, array in reader.get_variable_to_shape_map(model).items():
        state[convert_tf_weight_name(name)] = torch.as_tensor(array)
    model.load_state_dict(state, strict=False)
    return model


def main(path):
    import tensorflow as tf  # read, not installed: a library the engine does not know

    return load_tf_weights(nn.Linear(4, 2), tf.train.load_checkpoint(path))


if __name__ == "__main__" and len(sys.argv) > 1:
    main(sys.argv[1])
