// prism::nn in one include: Module, the layers, losses, initialisers and safetensors I/O.
#pragma once

#include "nn/init.h"
#include "nn/layers/activation.h"
#include "nn/layers/adaptive_pool.h"
#include "nn/layers/attention.h"
#include "nn/layers/container.h"
#include "nn/layers/conv.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/layers/flatten.h"
#include "nn/layers/linear.h"
#include "nn/layers/normalization.h"
#include "nn/layers/pool.h"
#include "nn/layers/transformer.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/safetensors.h"
