// Each lab_ops_*.cpp file adds the LabOps of one family of ops; lab_op.cpp calls them all.
#pragma once

#include <vector>

#include "kernels/lab/lab_op.h"

namespace prism::lab {

void add_matmul_lab_ops(std::vector<LabOp>& ops);
void add_elementwise_lab_ops(std::vector<LabOp>& ops);
void add_reduce_lab_ops(std::vector<LabOp>& ops);
void add_softmax_lab_ops(std::vector<LabOp>& ops);
void add_conv_lab_ops(std::vector<LabOp>& ops);
void add_pool_lab_ops(std::vector<LabOp>& ops);
void add_optim_lab_ops(std::vector<LabOp>& ops);
void add_fused_lab_ops(std::vector<LabOp>& ops);

}  // namespace prism::lab
