#!/usr/bin/env python3
"""Writes Keras 3 model.to_json() fixtures for tests/fixtures/keras/ with each model's parameter counts.

Run where Keras 3 is installed (`pip install keras tensorflow-cpu`, or any backend): CI does not need it, the
fixtures are committed. Prints one line per fixture: file, keras version, count_params() (all weights, Batch-
Normalization's moving statistics included) and the trainable count, which PreNeT's `params` must equal.
"""
import json
import sys

import keras
from keras import layers


def sequential_cnn():
    return keras.Sequential([
        keras.Input((32, 32, 3)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.BatchNormalization(),
        layers.DepthwiseConv2D(3, padding="same"),
        layers.SeparableConv2D(64, 3, strides=2, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dropout(0.3),
        layers.Dense(10, activation="softmax"),
    ], name="sequential_cnn")


def functional_merge():
    x = keras.Input((28, 28, 16))
    a = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    a = layers.Conv2D(16, 3, padding="same")(a)
    s = layers.Add()([x, a])
    s = layers.Activation("relu")(s)
    b = layers.Conv2D(8, 1)(s)
    c = layers.Concatenate()([s, b])
    c = layers.AveragePooling2D()(c)
    c = layers.Flatten()(c)
    y = layers.Dense(10)(c)
    return keras.Model(x, y, name="functional_merge")


def text_lstm():
    x = keras.Input((40,), dtype="int32")
    e = layers.Embedding(5000, 64)(x)
    h = layers.Bidirectional(layers.LSTM(32, return_sequences=True))(e)
    h = layers.GRU(16)(h)
    y = layers.Dense(3, activation="softmax")(h)
    return keras.Model(x, y, name="text_bilstm")


def attention():
    x = keras.Input((64,), dtype="int32")
    e = layers.Embedding(1000, 128)(x)
    a = layers.MultiHeadAttention(num_heads=4, key_dim=32)(e, e)
    h = layers.LayerNormalization()(layers.Add()([e, a]))
    f = layers.Dense(256, activation="gelu")(h)
    f = layers.Dense(128)(f)
    h = layers.LayerNormalization()(layers.Add()([h, f]))
    y = layers.Dense(2)(layers.GlobalAveragePooling1D()(h))
    return keras.Model(x, y, name="attention_block")


def main(out_dir="tests/fixtures/keras"):
    for make in (sequential_cnn, functional_merge, text_lstm, attention):
        model = make()
        path = f"{out_dir}/{model.name}-keras{keras.__version__}.json"
        with open(path, "w") as f:
            f.write(json.dumps(json.loads(model.to_json()), indent=1) + "\n")
        trainable = sum(int(w.numpy().size) for w in model.trainable_weights)
        print(f"{path}\tkeras {keras.__version__}\tcount_params {model.count_params()}\ttrainable {trainable}")


if __name__ == "__main__":
    main(*sys.argv[1:])
