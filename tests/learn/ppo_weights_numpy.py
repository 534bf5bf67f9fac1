"""Checks that Python reads memtrace's PPO weights with NumPy alone (docs/control.md shows
load_safetensors): the policy's logits and the critic's values computed here from
agent.safetensors equal, to float32 rounding, those memtrace computed (probe.safetensors, written
by ppo_weights_probe); and a Gaussian agent's means, log standard deviations and values
(gaussian.safetensors, gaussian_probe.safetensors); and a recurrent agent's (torch.nn.GRU's cell
written out) over a sequence with an episode start inside it (gru.safetensors, gru_probe.safetensors),
also under Gaussian heads (gru_gaussian.safetensors, gru_gaussian_probe.safetensors).
Usage: python3 ppo_weights_numpy.py FOLDER"""
import json
import struct
import sys

import numpy as np


def load_safetensors(path):
    """The tensors (name -> numpy array) and the metadata of a safetensors file."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    metadata = header.pop("__metadata__", {})
    dtypes = {"F32": "<f4", "F64": "<f8", "U64": "<u8"}
    tensors = {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                   dtype=dtypes[t["dtype"]]).reshape(t["shape"])
               for name, t in header.items()}
    return tensors, metadata


def forward(weights, metadata, x):
    """Logits and values of the agent for the rows of x, as memtrace's Ppo computes them."""
    if "normalizer_epsilon" in metadata:
        eps, clip = float(metadata["normalizer_epsilon"]), float(metadata["normalizer_clip"])
        x = np.clip((x - weights["normalizer.mean"]) / np.sqrt(weights["normalizer.variance"] + eps), -clip, clip)
    layers = len(metadata["hidden"].split(",")) + 1
    outputs = []
    for net in ("actor", "critic"):
        h = x
        for layer in range(layers):
            h = h @ weights[f"{net}.{layer}.weight"].astype(np.float64).T + weights[f"{net}.{layer}.bias"]
            if layer + 1 < layers:
                h = np.tanh(h)
        outputs.append(h)
    return outputs[0], outputs[1][:, 0]


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def gru_forward(weights, metadata, x, starts, envs):
    """Logits and values of a recurrent agent (torch.nn.GRU's cell under the two heads) for the
    time-major rows of x (row t * envs + b: step t of environment b), the state zeroed where starts."""
    eps, clip = float(metadata["normalizer_epsilon"]), float(metadata["normalizer_clip"])
    x = np.clip((x - weights["normalizer.mean"]) / np.sqrt(weights["normalizer.variance"] + eps), -clip, clip)
    w_ih, w_hh = weights["gru.weight_ih_l0"].astype(np.float64), weights["gru.weight_hh_l0"].astype(np.float64)
    b_ih, b_hh = weights["gru.bias_ih_l0"], weights["gru.bias_hh_l0"]
    hidden = int(metadata["state_dim"])
    assert metadata["recurrent"] == "gru" and w_hh.shape == (3 * hidden, hidden), metadata
    states = np.zeros((envs, hidden))
    out = np.zeros((x.shape[0], hidden))
    for row in range(x.shape[0]):
        b = row % envs
        h = np.zeros(hidden) if starts[row] else states[b]
        gi, gh = w_ih @ x[row] + b_ih, w_hh @ h + b_hh
        r = sigmoid(gi[:hidden] + gh[:hidden])
        z = sigmoid(gi[hidden:2 * hidden] + gh[hidden:2 * hidden])
        n = np.tanh(gi[2 * hidden:] + r * gh[2 * hidden:])
        states[b] = out[row] = (1 - z) * n + z * h
    heads = {key: value for key, value in metadata.items() if key != "normalizer_epsilon"}  # x is normalised
    return forward(weights, heads, out)


def compare(name, ours, theirs):
    error = np.max(np.abs(ours - theirs) / (1.0 + np.abs(theirs)))
    print(f"{name}: {theirs.shape}, largest relative difference {error:.2e}")
    if not error < 1e-5:
        sys.exit(f"ppo_weights_numpy: the {name} differ from memtrace's by {error}")


def main():
    folder = sys.argv[1]
    weights, metadata = load_safetensors(f"{folder}/agent.safetensors")
    probe, _ = load_safetensors(f"{folder}/probe.safetensors")
    assert metadata["format"] == "memtrace.ppo_weights.1", metadata
    assert metadata["policy_distribution"] == "categorical", metadata
    logits, values = forward(weights, metadata, probe["inputs"].astype(np.float64))
    compare("logits", logits, probe["logits"])
    compare("values", values, probe["values"])

    # A Gaussian agent: the actor's output is the mean; log_std does not depend on the input.
    weights, metadata = load_safetensors(f"{folder}/gaussian.safetensors")
    probe, _ = load_safetensors(f"{folder}/gaussian_probe.safetensors")
    assert metadata["policy_distribution"] == "diagonal_gaussian", metadata
    assert metadata["action_dim"] == "2", metadata
    means, values = forward(weights, metadata, probe["inputs"].astype(np.float64))
    compare("means", means, probe["means"])
    compare("log_stds", np.broadcast_to(weights["log_std"], means.shape), probe["log_stds"])
    compare("values", values, probe["values"])
    clipped = np.abs((probe["inputs"] - weights["normalizer.mean"])
                     / np.sqrt(weights["normalizer.variance"] + 1e-8)) > 10
    assert clipped.any(), "the probe should exercise the clip"

    # A recurrent agent over a sequence with an episode start inside it.
    weights, metadata = load_safetensors(f"{folder}/gru.safetensors")
    probe, _ = load_safetensors(f"{folder}/gru_probe.safetensors")
    starts = probe["starts"]
    assert starts.sum() == 3 and starts[7] == 1, starts
    logits, values = gru_forward(weights, metadata, probe["inputs"].astype(np.float64), starts, envs=2)
    compare("GRU logits", logits, probe["logits"])
    compare("GRU values", values, probe["values"])
    unreset = starts.copy()
    unreset[7] = 0
    moved, _ = gru_forward(weights, metadata, probe["inputs"].astype(np.float64), unreset, envs=2)
    assert np.abs(moved[7:] - logits[7:]).max() > 1e-4, "the reset inside the sequence should matter"

    # The same under Gaussian heads: the heads' output is the mean, log_std is the heads' own.
    weights, metadata = load_safetensors(f"{folder}/gru_gaussian.safetensors")
    probe, _ = load_safetensors(f"{folder}/gru_gaussian_probe.safetensors")
    assert metadata["policy_distribution"] == "diagonal_gaussian" and metadata["action_dim"] == "2", metadata
    means, values = gru_forward(weights, metadata, probe["inputs"].astype(np.float64), probe["starts"], envs=2)
    compare("GRU means", means, probe["means"])
    compare("GRU log_stds", np.broadcast_to(weights["log_std"], means.shape), probe["log_stds"])
    compare("GRU values", values, probe["values"])
    print("ppo_weights_numpy: NumPy gives memtrace's logits, means, log standard deviations and values")


if __name__ == "__main__":
    main()
