# Regenerates resources/templates/*.netsmith.json and the default example project.
# Run from the repository root: python3 tools/generate_templates.py
import json, collections
O = collections.OrderedDict

FASHION_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                   "Sneaker", "Bag", "Ankle boot"]

def node(id, op, inputs, params=None, pos=None):
    return O(id=id, op=op, params=params or {}, inputs=inputs, pos=pos or [0, 0])

def chain(specs, start_y=0):
    """specs: list of (id, op, params) forming a chain from 'input'."""
    nodes = []
    prev = None
    y = start_y
    for id, op, params in specs:
        nodes.append(node(id, op, [prev] if prev else [], params, [0, y]))
        prev = id
        y += 80
    return nodes

def project(name, description, inp, nodes, data, train, augment=()):
    return O(format="netsmith-project", version=1, name=name,
             description=description,
             model=O(input=inp, nodes=nodes), data=data, augment=list(augment), train=train)

FM = "/usr/share/datasets/fashion-mnist/"
fashion_data = O(train=O(format="idx", images=FM + "train-images-idx3-ubyte.gz", labels=FM + "train-labels-idx1-ubyte.gz"),
                 validation=O(fraction=0.1, seed=0, stratified=True),
                 test=O(format="idx", images=FM + "t10k-images-idx3-ubyte.gz", labels=FM + "t10k-labels-idx1-ubyte.gz"),
                 classes=FASHION_CLASSES,
                 normalize=O(mean=[0.2860], std=[0.3530]),
                 on_error="skip")
cifar_data = O(train=O(format="image_folder", root="data/train"),
               validation=O(fraction=0.1, seed=0, stratified=True),
               fit="resize_crop", normalize="auto", on_error="skip")
# Flips only: on the 10-minute CPU budget of the default run, random crops cost more accuracy
# (slower learning) than they bring back (measured: 90.25% after 5 epochs with crops).
fashion_augment = [O(transform="HorizontalFlip", p=0.5)]
cifar_augment = [O(transform="RandomCrop", size="auto", padding=4), O(transform="HorizontalFlip", p=0.5)]
default_train = O(epochs=5, batch_size=128, optimizer=O(type="adam", lr=0.001, weight_decay=0.0),
                  schedule=O(type="cosine", warmup_epochs=0), seed=0, device="cpu")

fashion_cnn = chain([
    ("input", "Input", {}),
    ("conv1", "Conv2d", O(out_channels=32, kernel_size=3, padding=1)),
    ("bn1", "BatchNorm2d", {}),
    ("relu1", "ReLU", {}),
    ("pool1", "MaxPool2d", O(kernel_size=2)),
    ("conv2", "Conv2d", O(out_channels=64, kernel_size=3, padding=1)),
    ("bn2", "BatchNorm2d", {}),
    ("relu2", "ReLU", {}),
    ("pool2", "MaxPool2d", O(kernel_size=2)),
    ("flatten", "Flatten", {}),
    ("fc1", "Linear", O(out_features=128)),
    ("relu3", "ReLU", {}),
    ("drop1", "Dropout", O(p=0.3)),
    ("fc2", "Linear", O(out_features=10)),
])
mnist_in = O(channels=1, height=28, width=28)
# The first default: 91.77% test accuracy in 7 epochs (~3 min). Kept as a template.
fashion_small = project("fashion_mnist_cnn", "A small CNN on Fashion-MNIST: 2x [conv3x3-BN-ReLU-maxpool], FC-ReLU-Dropout-FC.",
                        mnist_in, fashion_cnn, fashion_data,
                        O(default_train, epochs=7, label_smoothing=0.1), fashion_augment)

# The default project: two VGG-style stages (two 3x3 convolutions each) and a wider head.
# Chosen by measurement on the 2-core build machine against issue 19's target (>= 93.4% test
# accuracy within 15 minutes): ~1,300 training images/s, 15 epochs, see the README.
fashion_vgg = chain([
    ("input", "Input", {}),
    ("conv1_1", "Conv2d", O(out_channels=32, kernel_size=3, padding=1)),
    ("bn1_1", "BatchNorm2d", {}),
    ("relu1_1", "ReLU", {}),
    ("conv1_2", "Conv2d", O(out_channels=32, kernel_size=3, padding=1)),
    ("bn1_2", "BatchNorm2d", {}),
    ("relu1_2", "ReLU", {}),
    ("pool1", "MaxPool2d", O(kernel_size=2)),
    ("conv2_1", "Conv2d", O(out_channels=64, kernel_size=3, padding=1)),
    ("bn2_1", "BatchNorm2d", {}),
    ("relu2_1", "ReLU", {}),
    ("conv2_2", "Conv2d", O(out_channels=64, kernel_size=3, padding=1)),
    ("bn2_2", "BatchNorm2d", {}),
    ("relu2_2", "ReLU", {}),
    ("pool2", "MaxPool2d", O(kernel_size=2)),
    ("flatten", "Flatten", {}),
    ("drop0", "Dropout", O(p=0.25)),
    ("fc1", "Linear", O(out_features=256)),
    ("relu_fc1", "ReLU", {}),
    ("drop1", "Dropout", O(p=0.3)),
    ("fc2", "Linear", O(out_features=10)),
])
fashion = project("fashion_mnist", "The default network on Fashion-MNIST: 2x [conv3x3-BN-ReLU, conv3x3-BN-ReLU, maxpool], Dropout-FC-ReLU-Dropout-FC.",
                  mnist_in, fashion_vgg, fashion_data,
                  O(default_train, epochs=15, label_smoothing=0.1), fashion_augment)

lenet = project("lenet5", "LeNet-5 (LeCun et al. 1998) with tanh and average pooling, for 28x28 grey images.",
                mnist_in, chain([
    ("input", "Input", {}),
    ("c1", "Conv2d", O(out_channels=6, kernel_size=5, padding=2)),
    ("t1", "Tanh", {}),
    ("s2", "AvgPool2d", O(kernel_size=2)),
    ("c3", "Conv2d", O(out_channels=16, kernel_size=5)),
    ("t3", "Tanh", {}),
    ("s4", "AvgPool2d", O(kernel_size=2)),
    ("flatten", "Flatten", {}),
    ("f5", "Linear", O(out_features=120)),
    ("t5", "Tanh", {}),
    ("f6", "Linear", O(out_features=84)),
    ("t6", "Tanh", {}),
    ("output", "Linear", O(out_features=10)),
]), fashion_data, O(default_train, optimizer=O(type="sgd", lr=0.01, momentum=0.9)))

# Small ResNet for 3x32x32 images.
rn = []
def add(id, op, inputs, params=None, x=0, y=0):
    rn.append(node(id, op, inputs, params, [x, y]))
y = 0
add("input", "Input", [], y=y); y += 80
add("stem_conv", "Conv2d", ["input"], O(out_channels=16, kernel_size=3, padding=1, bias=False), y=y); y += 80
add("stem_bn", "BatchNorm2d", ["stem_conv"], y=y); y += 80
add("stem_relu", "ReLU", ["stem_bn"], y=y); y += 80
def block(name, inp, ch, stride, y):
    add(f"{name}_conv1", "Conv2d", [inp], O(out_channels=ch, kernel_size=3, stride=stride, padding=1, bias=False), y=y); y += 80
    add(f"{name}_bn1", "BatchNorm2d", [f"{name}_conv1"], y=y); y += 80
    add(f"{name}_relu1", "ReLU", [f"{name}_bn1"], y=y); y += 80
    add(f"{name}_conv2", "Conv2d", [f"{name}_relu1"], O(out_channels=ch, kernel_size=3, padding=1, bias=False), y=y); y += 80
    add(f"{name}_bn2", "BatchNorm2d", [f"{name}_conv2"], y=y); y += 80
    skip = inp
    if stride != 1:
        add(f"{name}_down", "Conv2d", [inp], O(out_channels=ch, kernel_size=1, stride=stride, bias=False), x=240, y=y - 240)
        add(f"{name}_down_bn", "BatchNorm2d", [f"{name}_down"], x=240, y=y - 160)
        skip = f"{name}_down_bn"
    add(f"{name}_add", "Add", [f"{name}_bn2", skip], y=y); y += 80
    add(f"{name}_out", "ReLU", [f"{name}_add"], y=y); y += 80
    return f"{name}_out", y
out, y = block("block1", "stem_relu", 16, 1, y)
out, y = block("block2", out, 32, 2, y)
out, y = block("block3", out, 64, 2, y)
add("gap", "GlobalAvgPool", [out], y=y); y += 80
add("flatten", "Flatten", ["gap"], y=y); y += 80
add("fc", "Linear", ["flatten"], O(out_features=10), y=y)
resnet = project("small_resnet", "A small ResNet (3 residual stages, 16-32-64 channels) for 32x32 colour images.",
                 O(channels=3, height=32, width=32), rn, cifar_data,
                 O(default_train, optimizer=O(type="sgd", lr=0.1, momentum=0.9, weight_decay=0.0005),
                   channels_last=True), cifar_augment)

vgg_specs = [("input", "Input", {})]
for stage, ch in enumerate([32, 64, 128], start=1):
    vgg_specs += [(f"conv{stage}_1", "Conv2d", O(out_channels=ch, kernel_size=3, padding=1)),
                  (f"bn{stage}_1", "BatchNorm2d", {}),
                  (f"relu{stage}_1", "ReLU", {}),
                  (f"conv{stage}_2", "Conv2d", O(out_channels=ch, kernel_size=3, padding=1)),
                  (f"bn{stage}_2", "BatchNorm2d", {}),
                  (f"relu{stage}_2", "ReLU", {}),
                  (f"pool{stage}", "MaxPool2d", O(kernel_size=2))]
vgg_specs += [("flatten", "Flatten", {}), ("fc1", "Linear", O(out_features=256)), ("relu_fc1", "ReLU", {}),
              ("drop1", "Dropout", O(p=0.5)), ("fc2", "Linear", O(out_features=10))]
vgg = project("small_vgg", "A small VGG-style network (3 stages of two 3x3 convolutions) for 32x32 colour images.",
              O(channels=3, height=32, width=32), chain(vgg_specs), cifar_data, default_train, cifar_augment)

def write(path, obj):
    with open(path, "w") as f:
        f.write(json.dumps(obj, indent=2) + "\n")

write("resources/templates/fashion_mnist_cnn.netsmith.json", fashion_small)
write("resources/templates/lenet5.netsmith.json", lenet)
write("resources/templates/small_resnet.netsmith.json", resnet)
write("resources/templates/small_vgg.netsmith.json", vgg)
write("resources/examples/fashion_mnist.netsmith.json", fashion)
