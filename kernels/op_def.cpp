#include "kernels/op_def.h"

#include <algorithm>
#include <mutex>
#include <string>

namespace prism::kernels {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::matmul:
      return "matmul";
    case OpClass::conv:
      return "conv";
    case OpClass::attention:
      return "attention";
    case OpClass::normalisation:
      return "normalisation";
    case OpClass::pooling:
      return "pooling";
    case OpClass::elementwise:
      return "elementwise";
    case OpClass::data:
      return "data";
    case OpClass::optimizer:
      return "optimizer";
  }
  return "?";
}

namespace {

// Filled during static initialisation (each op.cpp's OpDefsFile), sorted on first read. A
// function-local static, so it exists before the first file adds to it.
struct DefList {
  std::mutex mu;  // the first read may come from two threads at once (a loader's and main)
  std::vector<const OpDef*> defs;
  bool sorted = false;
};

DefList& def_list() {
  static DefList list;
  return list;
}

bool by_name(const OpDef* a, const OpDef* b) {
  return std::string_view(a->name) < std::string_view(b->name);
}

}  // namespace

OpDefsFile::OpDefsFile(std::initializer_list<std::reference_wrapper<const OpDef>> defs) {
  DefList& list = def_list();
  std::lock_guard<std::mutex> lock(list.mu);
  for (const OpDef& d : defs) list.defs.push_back(&d);
  list.sorted = false;
}

const std::vector<const OpDef*>& op_defs() {
  DefList& list = def_list();
  std::lock_guard<std::mutex> lock(list.mu);
  if (!list.sorted) {
    std::sort(list.defs.begin(), list.defs.end(), by_name);
    const auto twin = std::adjacent_find(
        list.defs.begin(), list.defs.end(),
        [](const OpDef* a, const OpDef* b) { return std::string_view(a->name) == b->name; });
    if (twin != list.defs.end()) {
      throw Error(std::string("op '") + (*twin)->name + "' is defined twice (kernels/ops/)");
    }
    list.sorted = true;
  }
  return list.defs;
}

const OpDef* find_op_def(std::string_view name) {
  const auto& defs = op_defs();
  const auto it = std::lower_bound(
      defs.begin(), defs.end(), name,
      [](const OpDef* d, std::string_view n) { return std::string_view(d->name) < n; });
  return it != defs.end() && (*it)->name == name ? *it : nullptr;
}

}  // namespace prism::kernels
