#include "tensor/layout.h"

#include <string>

namespace prism::detail {

int wrap_dim(const char* op, int d, int ndim) {
  int n = ndim == 0 ? 1 : ndim;  // a scalar accepts dim 0 / -1, as in NumPy's keepdims logic
  if (d < -n || d >= n) {
    throw Error(std::string(op) + ": dim " + std::to_string(d) + " is out of range for a " +
                std::to_string(ndim) + "-d tensor");
  }
  return d < 0 ? d + n : d;
}

Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b) {
  int n = std::max(a.size(), b.size());
  Dims out;
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      throw Error(std::string(op) + ": shapes " + a.str() + " and " + b.str() +
                  " cannot be broadcast (dim " + std::to_string(i) + ": " + std::to_string(da) +
                  " vs " + std::to_string(db) + ")");
    }
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

Dims broadcast_strides(const Tensor& x, const Dims& out_shape) {
  Dims s;
  int off = out_shape.size() - x.dim();
  for (int i = 0; i < out_shape.size(); ++i) {
    int j = i - off;
    s.push_back(j < 0 || x.shape()[j] == 1 ? 0 : x.strides()[j]);
  }
  return s;
}

namespace {

// Merges dims over up to three stride lists that must all agree.
int merge(const Dims& shape, const Dims* strides[], int nlists, int64_t* shape_out,
          int64_t* strides_out[]) {
  int n = 0;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = n > 0;
    for (int l = 0; l < nlists && mergeable; ++l) {
      mergeable = strides_out[l][n - 1] == (*strides[l])[d] * shape[d];
    }
    if (mergeable) {
      shape_out[n - 1] *= shape[d];
      for (int l = 0; l < nlists; ++l) strides_out[l][n - 1] = (*strides[l])[d];
    } else {
      shape_out[n] = shape[d];
      for (int l = 0; l < nlists; ++l) strides_out[l][n] = (*strides[l])[d];
      ++n;
    }
  }
  if (n == 0) {                    // a scalar or all-ones shape: one element
    shape_out[0] = shape.numel();  // 1, or 0 for an empty tensor
    for (int l = 0; l < nlists; ++l) strides_out[l][0] = 1;
    n = 1;
  }
  return n;
}

}  // namespace

kernels::Layout make_layout(const Dims& shape, const Dims& strides) {
  kernels::Layout L;
  const Dims* s[1] = {&strides};
  int64_t* o[1] = {L.stride};
  L.ndim = merge(shape, s, 1, L.shape, o);
  return L;
}

int merge_dims2(const Dims& shape, const Dims& sa, const Dims& sb, int64_t* shape_out,
                int64_t* sa_out, int64_t* sb_out) {
  const Dims* s[2] = {&sa, &sb};
  int64_t* o[2] = {sa_out, sb_out};
  return merge(shape, s, 2, shape_out, o);
}

int merge_dims_copy(const Dims& shape, const Dims& ss, const Dims& ds, int64_t* shape_out,
                    int64_t* ss_out, int64_t* ds_out) {
  return merge_dims2(shape, ss, ds, shape_out, ss_out, ds_out);
}

bool batch_stride(const Tensor& t, int64_t& stride) {
  const Dims shape(t.shape().data(), t.dim() - 2), strides(t.strides().data(), t.dim() - 2);
  const kernels::Layout L = make_layout(shape, strides);
  if (L.ndim != 1) return false;
  stride = L.shape[0] == 1 ? 0 : L.stride[0];
  return true;
}

bool is_transposed(const Tensor& t) {
  return t.dim() == 2 && t.strides()[0] == 1 && t.strides()[1] != 1 && t.shape()[0] > 1;
}

RowsView rows_view(const Tensor& x) {
  RowsView r;
  r.v = x.detach();
  const int split = r.v.dim() - 1;
  if (!as_2d(r.v, split, r.rows, r.row_stride, r.cols, r.col_stride)) {
    r.v = r.v.contiguous();
    as_2d(r.v, split, r.rows, r.row_stride, r.cols, r.col_stride);
  }
  return r;
}

bool as_2d(const Tensor& x, int split, int64_t& rows, int64_t& row_stride, int64_t& cols,
           int64_t& col_stride) {
  Dims outer_shape, outer_strides, inner_shape, inner_strides;
  for (int d = 0; d < x.dim(); ++d) {
    (d < split ? outer_shape : inner_shape).push_back(x.shape()[d]);
    (d < split ? outer_strides : inner_strides).push_back(x.strides()[d]);
  }
  kernels::Layout o = make_layout(outer_shape, outer_strides);
  kernels::Layout i = make_layout(inner_shape, inner_strides);
  if (o.ndim != 1 || i.ndim != 1) return false;
  rows = o.shape[0];
  row_stride = o.stride[0];
  cols = i.shape[0];
  col_stride = i.stride[0];
  return true;
}

}  // namespace prism::detail
