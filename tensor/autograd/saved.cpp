#include "tensor/autograd/saved.h"

#include <string>

namespace prism::autograd {

std::string SavedTensor::describe() const {
  std::string s;
  switch (kind_) {
    case SavedKind::input:
      s = "input #" + std::to_string(index_);
      if (name_) s += std::string(" (") + name_ + ")";
      break;
    case SavedKind::output:
      s = "its output";
      if (name_) s += std::string(" ") + name_;
      break;
    case SavedKind::internal:
      s = std::string("its intermediate ") + (name_ ? name_ : "buffer");
      break;
  }
  return s;
}

void SavedTensor::fail(const char* op) const {
  const Storage& s = *t_.storage();
  const std::string what = std::string(op) + ": a tensor saved for backward (" + describe() +
                           ", shape " + t_.shape().str() + ")";
  if (s.id() != storage_id_) {
    throw Error(what +
                " had its memory replaced after the forward (nn::assign or Module::to on it): "
                "backward would use the new values and compute a wrong gradient; change it only "
                "after backward, or give the forward a clone of it");
  }
  throw Error(what + " was modified in place after the forward (version " +
              std::to_string(version_) + " then, " + std::to_string(s.version()) +
              " now): backward would use the new values and compute a wrong gradient; clone it "
              "before modifying, or modify it only after backward");
}

}  // namespace prism::autograd
