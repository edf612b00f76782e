// Batched restrained MD on a CUDA device (see gemflow/distgeom/anneal_cuda.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gemflow/cuda/buffer.hpp"
#include "gemflow/cuda/check.hpp"
#include "gemflow/distgeom/anneal_cuda.hpp"

namespace gemflow::distgeom::cuda {
namespace {

constexpr double kMass = 100.0, kForceToAccel = 418.4, kBoltzmann = 0.0019872041, kTau = 0.05;
constexpr double kNoeSwitch = 0.5, kHbondR = 2.0, kSkin = 1.5, kPi = 3.14159265358979323846;  // as anneal.cpp
constexpr int kThreads = 256;

struct PairTerm {
  int i, j;
  double d0;
};
struct ChiralTermD {
  int c, a, b, d;
  double v0;
};
struct TorsionTermD {
  int i, j, k, l;
  double phi0;
  int two_fold;
};
struct DihedralTermD {
  int i, j, k, l;
  double lo, up, w;
};
struct RamaTermD {
  int cp, n, ca, c, nn;
};
// kRamaBoxes (anneal.hpp) in radians: φ lower, φ upper, ψ lower, ψ upper, offset per box
struct RamaBoxesD {
  double b[3][5];
};
struct NoeTermD {
  int first, count, single;
  double lower, upper;
};
struct SymmetryTermD {
  int a, b, c, d;
};

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ void add3(double* f, int i, double x, double y, double z) {
  atomicAdd(&f[3 * i], x);
  atomicAdd(&f[3 * i + 1], y);
  atomicAdd(&f[3 * i + 2], z);
}

// The MD steps need forces only: e is null there (every term adding to B addresses would
// serialise on them).
__device__ void add_energy(double* e, int b, double v) {
  if (e) atomicAdd(&e[b], v);
}

__device__ double wrapd(double a) {
  while (a > kPi) a -= 2 * kPi;
  while (a <= -kPi) a += 2 * kPi;
  return a;
}

// Torsion and gradient (Blondel & Karplus 1996), as anneal.cpp's torsion_grad.
__device__ double torsion_grad(const double* a, const double* b, const double* c, const double* d, double* ga,
                               double* gb, double* gc, double* gd) {
  double f[3], g[3], h[3];
  for (int k = 0; k < 3; ++k) f[k] = a[k] - b[k], g[k] = b[k] - c[k], h[k] = d[k] - c[k];
  const double A[3] = {f[1] * g[2] - f[2] * g[1], f[2] * g[0] - f[0] * g[2], f[0] * g[1] - f[1] * g[0]};
  const double B[3] = {h[1] * g[2] - h[2] * g[1], h[2] * g[0] - h[0] * g[2], h[0] * g[1] - h[1] * g[0]};
  const double AA = A[0] * A[0] + A[1] * A[1] + A[2] * A[2], BB = B[0] * B[0] + B[1] * B[1] + B[2] * B[2];
  const double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  const double BxA[3] = {B[1] * A[2] - B[2] * A[1], B[2] * A[0] - B[0] * A[2], B[0] * A[1] - B[1] * A[0]};
  const double sinp = (BxA[0] * g[0] + BxA[1] * g[1] + BxA[2] * g[2]) / fmax(gn, 1e-12);
  const double cosp = A[0] * B[0] + A[1] * B[1] + A[2] * B[2];
  const double phi = atan2(sinp, cosp);
  if (AA > 1e-16 && BB > 1e-16 && gn > 1e-12) {
    const double fg = f[0] * g[0] + f[1] * g[1] + f[2] * g[2], hg = h[0] * g[0] + h[1] * g[1] + h[2] * g[2];
    for (int k = 0; k < 3; ++k) {
      const double dA = -gn / AA * A[k], dD = gn / BB * B[k];
      ga[k] = dA;
      gd[k] = dD;
      gb[k] = -dA + fg / (AA * gn) * A[k] - hg / (BB * gn) * B[k];
      gc[k] = -dD - fg / (AA * gn) * A[k] + hg / (BB * gn) * B[k];
    }
  } else {
    for (int k = 0; k < 3; ++k) ga[k] = gb[k] = gc[k] = gd[k] = 0;
  }
  return phi;
}

// bonds (the first nbonds terms, weight kb), then angles (ka)
__global__ void pair_kernel(const PairTerm* t, int nt, int nbonds, double kb, double ka, int n, int B, const double* x,
                            double* f, double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt), q = static_cast<int>(id % nt);
  const PairTerm p = t[q];
  const double k = q < nbonds ? kb : ka;
  const double* X = x + 3LL * n * b;
  double* F = f + 3LL * n * b;
  const double dx = X[3 * p.i] - X[3 * p.j], dy = X[3 * p.i + 1] - X[3 * p.j + 1], dz = X[3 * p.i + 2] - X[3 * p.j + 2];
  const double d = sqrt(dx * dx + dy * dy + dz * dz), r = d - p.d0;
  add_energy(e, b, k * r * r);
  if (d <= 0) return;
  const double c = 2 * k * r / d;
  add3(F, p.i, c * dx, c * dy, c * dz);
  add3(F, p.j, -c * dx, -c * dy, -c * dz);
}

__global__ void chiral_kernel(const ChiralTermD* t, int nt, int n, int B, double k, const double* x, double* f,
                              double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const ChiralTermD c = t[id % nt];
  const double* X = x + 3LL * n * b;
  double* F = f + 3LL * n * b;
  double A[3], Bv[3], D[3];
  for (int q = 0; q < 3; ++q)
    A[q] = X[3 * c.a + q] - X[3 * c.c + q], Bv[q] = X[3 * c.b + q] - X[3 * c.c + q],
    D[q] = X[3 * c.d + q] - X[3 * c.c + q];
  const double BxD[3] = {Bv[1] * D[2] - Bv[2] * D[1], Bv[2] * D[0] - Bv[0] * D[2], Bv[0] * D[1] - Bv[1] * D[0]};
  const double DxA[3] = {D[1] * A[2] - D[2] * A[1], D[2] * A[0] - D[0] * A[2], D[0] * A[1] - D[1] * A[0]};
  const double AxB[3] = {A[1] * Bv[2] - A[2] * Bv[1], A[2] * Bv[0] - A[0] * Bv[2], A[0] * Bv[1] - A[1] * Bv[0]};
  const double v = A[0] * BxD[0] + A[1] * BxD[1] + A[2] * BxD[2], r = v - c.v0;
  add_energy(e, b, k * r * r);
  const double s = 2 * k * r;
  add3(F, c.a, s * BxD[0], s * BxD[1], s * BxD[2]);
  add3(F, c.b, s * DxA[0], s * DxA[1], s * DxA[2]);
  add3(F, c.d, s * AxB[0], s * AxB[1], s * AxB[2]);
  add3(F, c.c, -s * (BxD[0] + DxA[0] + AxB[0]), -s * (BxD[1] + DxA[1] + AxB[1]), -s * (BxD[2] + DxA[2] + AxB[2]));
}

__device__ void torsion_forces(double* F, int i, int j, int k, int l, double dE, const double* ga, const double* gb,
                               const double* gc, const double* gd) {
  add3(F, i, dE * ga[0], dE * ga[1], dE * ga[2]);
  add3(F, j, dE * gb[0], dE * gb[1], dE * gb[2]);
  add3(F, k, dE * gc[0], dE * gc[1], dE * gc[2]);
  add3(F, l, dE * gd[0], dE * gd[1], dE * gd[2]);
}

__global__ void plane_kernel(const TorsionTermD* t, int nt, int n, int B, double kp, const double* x, double* f,
                             double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const TorsionTermD p = t[id % nt];
  const double* X = x + 3LL * n * b;
  double ga[3], gb[3], gc[3], gd[3];
  const double phi = torsion_grad(X + 3 * p.i, X + 3 * p.j, X + 3 * p.k, X + 3 * p.l, ga, gb, gc, gd);
  double en, dE;
  if (p.two_fold) {
    dE = kp * sin(2 * phi) / 2;
    en = kp * (1 - cos(2 * phi)) / 4;
  } else {
    dE = kp * sin(phi - p.phi0);
    en = kp * (1 - cos(phi - p.phi0));
  }
  add_energy(e, b, en);
  torsion_forces(f + 3LL * n * b, p.i, p.j, p.k, p.l, dE, ga, gb, gc, gd);
}

__global__ void dihedral_kernel(const DihedralTermD* t, int nt, int n, int B, double kc, const double* x, double* f,
                                double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const DihedralTermD r = t[id % nt];
  const double* X = x + 3LL * n * b;
  double ga[3], gb[3], gc[3], gd[3];
  const double phi = torsion_grad(X + 3 * r.i, X + 3 * r.j, X + 3 * r.k, X + 3 * r.l, ga, gb, gc, gd);
  const bool inside = r.lo <= r.up ? (phi >= r.lo && phi <= r.up) : (phi >= r.lo || phi <= r.up);
  if (inside) return;
  const double dl = wrapd(phi - r.lo), du = wrapd(phi - r.up);
  const double delta = fabs(du) < fabs(dl) ? du : dl;
  add_energy(e, b, kc * r.w * delta * delta);
  torsion_forces(f + 3LL * n * b, r.i, r.j, r.k, r.l, 2 * kc * r.w * delta, ga, gb, gc, gd);
}

// Signed distance of angle a outside the counter-clockwise interval [lo, up], as anneal.cpp.
__device__ double outside(double a, double lo, double up) {
  const bool inside = lo <= up ? (a >= lo && a <= up) : (a >= lo || a <= up);
  if (inside) return 0.0;
  const double dl = wrapd(a - lo), du = wrapd(a - up);
  return fabs(du) < fabs(dl) ? du : dl;
}

// Ramachandran boxes: k min_box (Δφ² + Δψ² + offset²), as anneal.cpp.
__global__ void rama_kernel(const RamaTermD* t, int nt, int n, int B, double k, RamaBoxesD boxes, const double* x,
                            double* f, double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const RamaTermD r = t[id % nt];
  const double* X = x + 3LL * n * b;
  double pa[3], pb[3], pc[3], pd[3], sa[3], sb[3], sc[3], sd[3];
  const double phi = torsion_grad(X + 3 * r.cp, X + 3 * r.n, X + 3 * r.ca, X + 3 * r.c, pa, pb, pc, pd);
  const double psi = torsion_grad(X + 3 * r.n, X + 3 * r.ca, X + 3 * r.c, X + 3 * r.nn, sa, sb, sc, sd);
  double best = INFINITY, dphi = 0, dpsi = 0;
  for (int q = 0; q < 3; ++q) {
    const double a = outside(phi, boxes.b[q][0], boxes.b[q][1]), c = outside(psi, boxes.b[q][2], boxes.b[q][3]),
                 o = boxes.b[q][4];
    if (a * a + c * c + o * o < best) best = a * a + c * c + o * o, dphi = a, dpsi = c;
  }
  if (best == 0) return;
  add_energy(e, b, k * best);
  double* F = f + 3LL * n * b;
  torsion_forces(F, r.cp, r.n, r.ca, r.c, 2 * k * dphi, pa, pb, pc, pd);
  torsion_forces(F, r.n, r.ca, r.c, r.nn, 2 * k * dpsi, sa, sb, sc, sd);
}

// One thread per (structure, atom i) over its row of the full pair list (both i-j and j-i are
// listed): the force on i is summed in registers, no atomics; each pair's energy counts half.
__global__ void repel_kernel(const int* rows, const int* counts, int stride, int n, int B, const double* radius,
                             const unsigned char* polar_h, const unsigned char* acceptor, double k, double scale,
                             const double* x, double* f, double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(n) * B) return;
  const int b = static_cast<int>(id / n), i = static_cast<int>(id % n);
  const double* X = x + 3LL * n * b;
  const int* row = rows + id * stride;
  const int c = min(counts[id], stride);
  const double xi = X[3 * i], yi = X[3 * i + 1], zi = X[3 * i + 2], ri = radius[i];
  const bool hi = polar_h[i], ai = acceptor[i];
  double fx = 0, fy = 0, fz = 0, en = 0;
  for (int q = 0; q < c; ++q) {
    const int j = row[q];
    const double R = scale * ((hi && acceptor[j]) || (polar_h[j] && ai) ? kHbondR : ri + radius[j]);
    const double dx = xi - X[3 * j], dy = yi - X[3 * j + 1], dz = zi - X[3 * j + 2];
    const double s = R * R - (dx * dx + dy * dy + dz * dz);
    if (s <= 0) continue;
    en += k * s * s;
    const double cf = -4 * k * s;
    fx += cf * dx, fy += cf * dy, fz += cf * dz;
  }
  double* F = f + 3LL * n * b + 3 * i;
  F[0] += fx, F[1] += fy, F[2] += fz;  // the only writer of atom i in this kernel
  if (en != 0) add_energy(e, b, 0.5 * en);
}

// Whether any atom of structure b (one block each) moved more than √lim2 since its list was built.
__global__ void moved_kernel(const double* x, const double* built, int n, double lim2, int* flag) {
  const int b = blockIdx.x;
  const double* X = x + 3LL * n * b;
  const double* Y = built + 3LL * n * b;
  bool moved = false;
  for (int i = threadIdx.x; i < n && !moved; i += blockDim.x) {
    const double dx = X[3 * i] - Y[3 * i], dy = X[3 * i + 1] - Y[3 * i + 1], dz = X[3 * i + 2] - Y[3 * i + 2];
    moved = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz)) > lim2;
  }
  moved = __syncthreads_or(moved);
  if (threadIdx.x == 0) flag[b] = moved ? 1 : 0;
}

// The repel pair list of the structures with flag[b] set (all with flag null): for each atom i
// its partners j ≠ i, not 1-2 or 1-3 (excl: sorted CSR rows), nearer than √cut2, in increasing
// order, as repel_pairs() selects them (the same rounding: no FMA contraction). One warp per
// atom: the lanes test 32 consecutive j at a time and a ballot keeps the row in order (a build
// is on the MD step's critical path, so it spreads over many threads). Writes at most `stride`
// per row but counts all: the caller grows the rows when max_count exceeds the stride.
constexpr int kBuildWarps = 8;  // warps per block
__global__ void build_kernel(const double* x, double* built, int n, int stride, double cut2, const int* excl_off,
                             const int* excl, const int* flag, int* rows, int* counts, int* max_count) {
  const int b = blockIdx.y;
  if (flag && !flag[b]) return;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int i = blockIdx.x * kBuildWarps + static_cast<int>(threadIdx.x) / 32;
  if (i >= n) return;  // the whole warp
  const double* X = x + 3LL * n * b;
  const double xi = X[3 * i], yi = X[3 * i + 1], zi = X[3 * i + 2];
  const int e0 = excl_off[i], e1 = excl_off[i + 1];
  int* row = rows + (static_cast<long long>(b) * n + i) * stride;
  int c = 0;
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int j = j0 + lane;
    bool keep = false;
    if (j < n && j != i) {
      const double dx = xi - X[3 * j];
      const double dx2 = __dmul_rn(dx, dx);
      if (!(dx2 > cut2)) {
        const double dy = yi - X[3 * j + 1], dz = zi - X[3 * j + 2];
        keep = __dadd_rn(__dadd_rn(dx2, __dmul_rn(dy, dy)), __dmul_rn(dz, dz)) < cut2;
      }
      if (keep) {  // binary search of j in i's excluded partners
        int lo = e0, hi = e1;
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (excl[mid] < j) lo = mid + 1;
          else hi = mid;
        }
        keep = !(lo < e1 && excl[lo] == j);
      }
    }
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    if (keep) {
      const int at = c + __popc(mask & ((1u << lane) - 1u));
      if (at < stride) row[at] = j;
    }
    c += __popc(mask);
  }
  if (lane != 0) return;
  counts[static_cast<long long>(b) * n + i] = c;
  atomicMax(max_count, c);
  double* Y = built + 3LL * n * b;
  Y[3 * i] = xi, Y[3 * i + 1] = yi, Y[3 * i + 2] = zi;
}

__global__ void noe_kernel(const NoeTermD* t, int nt, const int* pairs, int n, int B, double k, const double* x,
                           double* f, double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const NoeTermD r = t[id % nt];
  const double* X = x + 3LL * n * b;
  double s = 0;
  for (int p = 0; p < r.count; ++p) {
    const int i = pairs[2 * (r.first + p)], j = pairs[2 * (r.first + p) + 1];
    const double dx = X[3 * i] - X[3 * j], dy = X[3 * i + 1] - X[3 * j + 1], dz = X[3 * i + 2] - X[3 * j + 2];
    const double d = fmax(sqrt(dx * dx + dy * dy + dz * dz), 1e-3);
    s += pow(d, -6.0);
  }
  const double deff = pow(s, -1.0 / 6.0);
  double xv = 0, sign = 1;
  if (deff > r.upper) {
    xv = deff - r.upper;
  } else if (r.single && deff < r.lower) {
    xv = r.lower - deff;
    sign = -1;
  }
  if (xv <= 0) return;
  double pen, dpen;
  if (xv <= kNoeSwitch) {
    pen = xv * xv;
    dpen = 2 * xv;
  } else {
    pen = kNoeSwitch * (2 * xv - kNoeSwitch);
    dpen = 2 * kNoeSwitch;
  }
  add_energy(e, b, k * pen);
  const double deff7 = pow(deff, 7.0);
  double* F = f + 3LL * n * b;
  for (int p = 0; p < r.count; ++p) {
    const int i = pairs[2 * (r.first + p)], j = pairs[2 * (r.first + p) + 1];
    const double dx = X[3 * i] - X[3 * j], dy = X[3 * i + 1] - X[3 * j + 1], dz = X[3 * i + 2] - X[3 * j + 2];
    const double dd = sqrt(dx * dx + dy * dy + dz * dz);
    if (dd <= 0) continue;
    const double d = fmax(dd, 1e-3);
    const double c = sign * k * dpen * deff7 * pow(d, -7.0) / dd;
    add3(F, i, c * dx, c * dy, c * dz);
    add3(F, j, -c * dx, -c * dy, -c * dz);
  }
}

// C2 symmetry: k (d(a, b) − d(c, d))², as anneal.cpp
__global__ void symmetry_kernel(const SymmetryTermD* t, int nt, int n, int B, double k, const double* x, double* f,
                                double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const SymmetryTermD p = t[id % nt];
  const double* X = x + 3LL * n * b;
  double* F = f + 3LL * n * b;
  const double ux = X[3 * p.a] - X[3 * p.b], uy = X[3 * p.a + 1] - X[3 * p.b + 1], uz = X[3 * p.a + 2] - X[3 * p.b + 2];
  const double vx = X[3 * p.c] - X[3 * p.d], vy = X[3 * p.c + 1] - X[3 * p.d + 1], vz = X[3 * p.c + 2] - X[3 * p.d + 2];
  const double d1 = sqrt(ux * ux + uy * uy + uz * uz), d2 = sqrt(vx * vx + vy * vy + vz * vz), r = d1 - d2;
  add_energy(e, b, k * r * r);
  if (d1 > 0) {
    const double c = 2 * k * r / d1;
    add3(F, p.a, c * ux, c * uy, c * uz);
    add3(F, p.b, -c * ux, -c * uy, -c * uz);
  }
  if (d2 > 0) {
    const double c = -2 * k * r / d2;
    add3(F, p.c, c * vx, c * vy, c * vz);
    add3(F, p.d, -c * vx, -c * vy, -c * vz);
  }
}

// First half step: v -= ½ h c f; x += h v; the forces zeroed for the next evaluation, the
// kinetic energies for the second half, `bad` set on a non-finite coordinate.
__global__ void kick_drift_kernel(double* x, double* v, double* f, long long m, double hc, double h, double* ke, int B,
                                  int* bad) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id < B) ke[id] = 0;
  if (id >= m) return;
  v[id] -= 0.5 * hc * f[id];
  x[id] += h * v[id];
  f[id] = 0;
  if (!isfinite(x[id])) *bad = 1;
}

// Second half step: v -= ½ h c f, and Σ v² per structure (blockIdx.y) by a block reduction.
__global__ void kick_kernel(double* v, const double* f, int per, double hc, double* ke) {
  __shared__ double part[kThreads];
  const int b = blockIdx.y, k = blockIdx.x * kThreads + threadIdx.x;
  double s = 0;
  if (k < per) {
    const long long id = static_cast<long long>(b) * per + k;
    v[id] -= 0.5 * hc * f[id];
    s = v[id] * v[id];
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(&ke[b], part[0]);
}

__global__ void scale_kernel(double* v, long long m, int per, const double* ke, double h, double t_bath) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= m) return;
  const double temp = kMass * ke[id / per] / (kForceToAccel * kBoltzmann * per);
  double lambda = sqrt(1 + h / kTau * (t_bath / fmax(temp, 1e-6) - 1));
  lambda = fmin(fmax(lambda, 0.8), 1.25);
  v[id] *= lambda;
}

template <class T>
gemflow::cuda::DeviceBuffer<T> upload(const std::vector<T>& host) {
  gemflow::cuda::DeviceBuffer<T> d(std::max<std::size_t>(host.size(), 1));
  if (!host.empty()) GF_CUDA_TRY(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> download(const gemflow::cuda::DeviceBuffer<T>& d, std::size_t count) {
  std::vector<T> h(count);
  if (count) GF_CUDA_TRY(cudaMemcpy(h.data(), d.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// When the repel pair lists are rebuilt during a run of MD steps.
struct Rebuild {
  std::size_t every = 0;         ///< > 0: every `every` steps (md_steps())
  bool on_displacement = false;  ///< when an atom of the structure moved > skin/2 (anneal())
};

// B conformers of one molecule on the device: the terms (uploaded once), coordinates,
// velocities, forces and the repel pair lists (rows of `stride_` partners per atom, grown when a
// build counts more), all kept there across MD runs.
class BatchMd {
 public:
  BatchMd(const AnnealTerms& t, std::size_t batch, int device, bool host_lists)
      : t_(t), n_(t.n), B_(batch), m_(3 * t.n * batch), host_lists_(host_lists) {
    GF_CUDA_TRY(cudaSetDevice(device));
    std::vector<PairTerm> pairs;
    for (const auto& p : t.bonds) pairs.push_back({static_cast<int>(p.i), static_cast<int>(p.j), p.d0});
    for (const auto& p : t.angles) pairs.push_back({static_cast<int>(p.i), static_cast<int>(p.j), p.d0});
    n_pairs_ = pairs.size();
    std::vector<ChiralTermD> chir;
    for (const auto& c : t.chirals)
      chir.push_back(
          {static_cast<int>(c.c), static_cast<int>(c.a), static_cast<int>(c.b), static_cast<int>(c.d), c.v0});
    std::vector<TorsionTermD> planes;
    for (const auto& p : t.planes)
      planes.push_back({static_cast<int>(p.i), static_cast<int>(p.j), static_cast<int>(p.k), static_cast<int>(p.l),
                        p.phi0, p.two_fold ? 1 : 0});
    std::vector<DihedralTermD> dih;
    for (const auto& d : t.dihedrals)
      dih.push_back({static_cast<int>(d.atoms[0]), static_cast<int>(d.atoms[1]), static_cast<int>(d.atoms[2]),
                     static_cast<int>(d.atoms[3]), d.lower * kPi / 180, d.upper * kPi / 180, d.weight});
    std::vector<RamaTermD> ramas;
    for (const auto& r : t.ramas)
      ramas.push_back({static_cast<int>(r.c_prev), static_cast<int>(r.n), static_cast<int>(r.ca), static_cast<int>(r.c),
                       static_cast<int>(r.n_next)});
    for (int q = 0; q < 3; ++q) {
      const RamaBox& rb = kRamaBoxes[q];
      const double lim[5] = {rb.phi_lower, rb.phi_upper, rb.psi_lower, rb.psi_upper, rb.offset};
      for (int c = 0; c < 5; ++c) boxes_.b[q][c] = lim[c] * (kPi / 180);  // as anneal.cpp
    }
    std::vector<NoeTermD> noes;
    std::vector<int> noe_pairs;
    for (const auto& r : t.noes) {
      noes.push_back({static_cast<int>(noe_pairs.size() / 2), static_cast<int>(r.pairs.size()), r.single ? 1 : 0,
                      r.lower, r.upper});
      for (auto [i, j] : r.pairs) noe_pairs.insert(noe_pairs.end(), {static_cast<int>(i), static_cast<int>(j)});
    }
    std::vector<SymmetryTermD> sym;
    for (const auto& q : t.symmetry)
      sym.push_back({static_cast<int>(q.a), static_cast<int>(q.b), static_cast<int>(q.c), static_cast<int>(q.d)});
    n_sym_ = sym.size();
    d_sym_ = upload(sym);
    std::vector<int> excl_off{0}, excl;
    for (const auto& e : t.excluded) {
      for (auto j : e) excl.push_back(static_cast<int>(j));
      excl_off.push_back(static_cast<int>(excl.size()));
    }
    n_chir_ = chir.size(), n_planes_ = planes.size(), n_dih_ = dih.size(), n_ramas_ = ramas.size();
    n_noes_ = noes.size();
    d_pairs_ = upload(pairs), d_chir_ = upload(chir), d_planes_ = upload(planes), d_dih_ = upload(dih);
    d_ramas_ = upload(ramas), d_noes_ = upload(noes), d_noe_pairs_ = upload(noe_pairs);
    d_radius_ = upload(t.radius), d_polar_ = upload(t.polar_h), d_acc_ = upload(t.acceptor);
    d_excl_off_ = upload(excl_off), d_excl_ = upload(excl);
    const std::size_t mm = std::max<std::size_t>(m_, 1), bb = std::max<std::size_t>(B_, 1);
    d_x_.allocate(mm), d_v_.allocate(mm), d_f_.allocate(mm), d_built_.allocate(mm);
    d_x0_.allocate(mm), d_v0_.allocate(mm);
    d_e_.allocate(bb), d_ke_.allocate(bb), d_flag_.allocate(bb), d_counts_.allocate(std::max<std::size_t>(B_ * n_, 1));
    d_max_.allocate(1), d_bad_.allocate(1);
    GF_CUDA_TRY(cudaMemset(d_bad_.data(), 0, sizeof(int)));
    for (double r : t.radius) rmax_ = std::max(rmax_, r);
  }

  void set_state(std::span<const double> x, std::span<const double> v) {
    GF_CUDA_TRY(cudaMemcpy(d_x_.data(), x.data(), m_ * sizeof(double), cudaMemcpyHostToDevice));
    GF_CUDA_TRY(cudaMemcpy(d_v_.data(), v.data(), m_ * sizeof(double), cudaMemcpyHostToDevice));
  }
  void get_state(std::span<double> x, std::span<double> v) const {
    GF_CUDA_TRY(cudaMemcpy(x.data(), d_x_.data(), m_ * sizeof(double), cudaMemcpyDeviceToHost));
    GF_CUDA_TRY(cudaMemcpy(v.data(), d_v_.data(), m_ * sizeof(double), cudaMemcpyDeviceToHost));
  }
  void set_stride(std::size_t s) { stride_ = std::max<std::size_t>(s, 1), d_rows_.deallocate(); }

  // Rebuilds the repel pair lists of every structure from the current coordinates (repel
  // radius scale `scale`), growing the rows until every partner fits.
  void build_all(double scale) {
    if (host_lists_) return build_on_host(scale);
    for (;;) {
      GF_CUDA_TRY(cudaMemset(d_max_.data(), 0, sizeof(int)));
      launch_build(scale, nullptr);
      const int mx = max_count();
      if (static_cast<std::size_t>(mx) <= stride_) return;
      grow(mx);
    }
  }

  // The lists as pairs i < j per structure, sorted (for tests).
  [[nodiscard]] std::vector<std::vector<std::array<std::size_t, 2>>> lists() const {
    const auto rows = download(d_rows_, B_ * n_ * stride_);
    const auto counts = download(d_counts_, B_ * n_);
    std::vector<std::vector<std::array<std::size_t, 2>>> out(B_);
    for (std::size_t b = 0; b < B_; ++b)
      for (std::size_t i = 0; i < n_; ++i)
        for (int q = 0; q < counts[b * n_ + i]; ++q) {
          const auto j = static_cast<std::size_t>(rows[(b * n_ + i) * stride_ + static_cast<std::size_t>(q)]);
          if (i < j) out[b].push_back({i, j});
        }
    for (auto& l : out) std::sort(l.begin(), l.end());
    return out;
  }

  // `steps` velocity-Verlet steps at weights w and bath temperature t_bath (anneal()'s stage:
  // lists rebuilt and forces evaluated first). The device runs ahead of the host in chunks of
  // kChunk steps; after each, one synchronisation checks the lists' size and the coordinates:
  // a chunk whose lists overflowed is run again from its start with larger rows (never
  // truncated), a non-finite coordinate throws std::runtime_error naming `stage`. `tick(k)`
  // after each chunk (k steps done) returning false cancels (std::runtime_error("cancelled")).
  void run(const AnnealWeights& w, double t_bath, double dt, std::size_t steps, Rebuild rebuild, const char* stage,
           const std::function<bool(std::size_t)>& tick) {
    constexpr std::size_t kChunk = 100;
    const double hc = dt * kForceToAccel / kMass, lim2 = 0.25 * kSkin * kSkin;
    const long long mm = static_cast<long long>(m_);
    const int per = static_cast<int>(3 * n_);
    const dim3 kick_grid(blocks(3 * n_), static_cast<unsigned>(B_));
    // Lists and forces at the start; an overflow of this build is found by the first chunk's check
    // (without steps, right here)
    auto restart = [&] {
      if (host_lists_) {
        build_on_host(w.rep_scale);
      } else {
        GF_CUDA_TRY(cudaMemsetAsync(d_max_.data(), 0, sizeof(int)));
        launch_build(w.rep_scale, nullptr);
      }
      zero_forces();
      forces(w, nullptr);
    };
    restart();
    if (steps == 0 && static_cast<std::size_t>(max_count()) > stride_) {
      build_all(w.rep_scale);
      zero_forces();
      forces(w, nullptr);
    }
    for (std::size_t s0 = 0; s0 < steps;) {
      const std::size_t s1 = std::min(steps, s0 + kChunk);
      GF_CUDA_TRY(cudaMemcpyAsync(d_x0_.data(), d_x_.data(), m_ * sizeof(double), cudaMemcpyDeviceToDevice));
      GF_CUDA_TRY(cudaMemcpyAsync(d_v0_.data(), d_v_.data(), m_ * sizeof(double), cudaMemcpyDeviceToDevice));
      for (std::size_t s = s0; s < s1; ++s) {
        kick_drift_kernel<<<blocks(m_), kThreads>>>(d_x_.data(), d_v_.data(), d_f_.data(), mm, hc, dt, d_ke_.data(),
                                                    static_cast<int>(B_), d_bad_.data());
        GF_CUDA_CHECK_LAUNCH();
        if (rebuild.every && (s + 1) % rebuild.every == 0) {
          if (host_lists_) build_on_host(w.rep_scale);
          else launch_build(w.rep_scale, nullptr);
        } else if (rebuild.on_displacement && !host_lists_) {
          moved_kernel<<<static_cast<unsigned>(B_), kThreads>>>(d_x_.data(), d_built_.data(), static_cast<int>(n_),
                                                                lim2, d_flag_.data());
          GF_CUDA_CHECK_LAUNCH();
          launch_build(w.rep_scale, d_flag_.data());
        }
        forces(w, nullptr);
        kick_kernel<<<kick_grid, kThreads>>>(d_v_.data(), d_f_.data(), per, hc, d_ke_.data());
        GF_CUDA_CHECK_LAUNCH();
        scale_kernel<<<blocks(m_), kThreads>>>(d_v_.data(), mm, per, d_ke_.data(), dt, t_bath);
        GF_CUDA_CHECK_LAUNCH();
      }
      const int mx = max_count();  // synchronises
      if (static_cast<std::size_t>(mx) > stride_) {
        // a build of this chunk left partners out: run it again from its start with rows that fit
        grow(mx);
        GF_CUDA_TRY(cudaMemcpy(d_x_.data(), d_x0_.data(), m_ * sizeof(double), cudaMemcpyDeviceToDevice));
        GF_CUDA_TRY(cudaMemcpy(d_v_.data(), d_v0_.data(), m_ * sizeof(double), cudaMemcpyDeviceToDevice));
        GF_CUDA_TRY(cudaMemset(d_bad_.data(), 0, sizeof(int)));
        restart();
        continue;
      }
      int bad = 0;
      GF_CUDA_TRY(cudaMemcpy(&bad, d_bad_.data(), sizeof(int), cudaMemcpyDeviceToHost));
      if (bad) throw std::runtime_error(std::string("anneal: a coordinate is not finite in the ") + stage + " stage");
      GF_CUDA_TRY(cudaMemsetAsync(d_max_.data(), 0, sizeof(int)));
      s0 = s1;
      if (tick && !tick(s0)) throw std::runtime_error("cancelled");
    }
  }

  // Energies (total, weights w) of every structure at the current coordinates and lists.
  [[nodiscard]] std::vector<double> energies(const AnnealWeights& w) {
    GF_CUDA_TRY(cudaMemset(d_e_.data(), 0, B_ * sizeof(double)));
    zero_forces();
    forces(w, d_e_.data());
    return download(d_e_, B_);
  }

 private:
  void zero_forces() { GF_CUDA_TRY(cudaMemsetAsync(d_f_.data(), 0, m_ * sizeof(double))); }

  // Adds every term's gradient at d_x_ to d_f_ (zeroed by the caller), energies to e when not null.
  void forces(const AnnealWeights& w, double* e) {
    const int ni = static_cast<int>(n_), Bi = static_cast<int>(B_);
    const double* x = d_x_.data();
    double* f = d_f_.data();
    if (n_pairs_) {
      pair_kernel<<<blocks(n_pairs_ * B_), kThreads>>>(d_pairs_.data(), static_cast<int>(n_pairs_),
                                                       static_cast<int>(t_.bonds.size()), w.bond, w.angle, ni, Bi, x, f,
                                                       e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_chir_) {
      chiral_kernel<<<blocks(n_chir_ * B_), kThreads>>>(d_chir_.data(), static_cast<int>(n_chir_), ni, Bi, w.chiral, x,
                                                        f, e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_planes_) {
      plane_kernel<<<blocks(n_planes_ * B_), kThreads>>>(d_planes_.data(), static_cast<int>(n_planes_), ni, Bi, w.plane,
                                                         x, f, e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_dih_) {
      dihedral_kernel<<<blocks(n_dih_ * B_), kThreads>>>(d_dih_.data(), static_cast<int>(n_dih_), ni, Bi, w.cdih, x, f,
                                                         e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_ramas_ && w.rama > 0) {
      rama_kernel<<<blocks(n_ramas_ * B_), kThreads>>>(d_ramas_.data(), static_cast<int>(n_ramas_), ni, Bi, w.rama,
                                                       boxes_, x, f, e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (w.rep > 0) {
      repel_kernel<<<blocks(n_ * B_), kThreads>>>(d_rows_.data(), d_counts_.data(), static_cast<int>(stride_), ni, Bi,
                                                  d_radius_.data(), d_polar_.data(), d_acc_.data(), w.rep, w.rep_scale,
                                                  x, f, e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_noes_) {
      noe_kernel<<<blocks(n_noes_ * B_), kThreads>>>(d_noes_.data(), static_cast<int>(n_noes_), d_noe_pairs_.data(), ni,
                                                     Bi, w.noe, x, f, e);
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_sym_ && w.sym > 0) {
      symmetry_kernel<<<blocks(n_sym_ * B_), kThreads>>>(d_sym_.data(), static_cast<int>(n_sym_), ni, Bi, w.sym, x, f,
                                                         e);
      GF_CUDA_CHECK_LAUNCH();
    }
  }

  [[nodiscard]] double cut2(double scale) const {
    const double cut = std::max(2 * rmax_, kHbondR) * scale + kSkin;  // as repel_pairs()
    return cut * cut;
  }

  void launch_build(double scale, const int* flag) {
    if (d_rows_.empty()) {
      d_rows_.allocate(std::max<std::size_t>(B_ * n_ * stride_, 1));
      // The build writes each row's first counts[i] slots; lists() copies whole rows back, and a
      // copy of never-written memory is an initcheck report (once per allocation, so it is free).
      GF_CUDA_TRY(cudaMemset(d_rows_.data(), 0xff, d_rows_.size() * sizeof(int)));
    }
    const dim3 grid(static_cast<unsigned>((n_ + kBuildWarps - 1) / kBuildWarps), static_cast<unsigned>(B_));
    build_kernel<<<grid, 32 * kBuildWarps>>>(d_x_.data(), d_built_.data(), static_cast<int>(n_),
                                             static_cast<int>(stride_), cut2(scale), d_excl_off_.data(), d_excl_.data(),
                                             flag, d_rows_.data(), d_counts_.data(), d_max_.data());
    GF_CUDA_CHECK_LAUNCH();
  }

  // The largest row count of the builds since d_max_ was last zeroed.
  [[nodiscard]] int max_count() const {
    int mx = 0;
    GF_CUDA_TRY(cudaMemcpy(&mx, d_max_.data(), sizeof(int), cudaMemcpyDeviceToHost));
    return mx;
  }

  void grow(int needed) { set_stride(static_cast<std::size_t>(needed) + static_cast<std::size_t>(needed) / 4 + 8); }

  // repel_pairs() on the host for each structure, uploaded as rows (the benchmark's baseline:
  // one host round trip and B O(n²) searches per build).
  void build_on_host(double scale) {
    std::vector<double> hx(m_);
    GF_CUDA_TRY(cudaMemcpy(hx.data(), d_x_.data(), m_ * sizeof(double), cudaMemcpyDeviceToHost));
    std::vector<std::vector<int>> part(B_ * n_);
    std::size_t mx = 0;
    for (std::size_t b = 0; b < B_; ++b) {
      for (auto [i, j] : repel_pairs(t_, std::span<const double>(hx.data() + 3 * n_ * b, 3 * n_), scale)) {
        part[b * n_ + i].push_back(static_cast<int>(j));
        part[b * n_ + j].push_back(static_cast<int>(i));
      }
      for (std::size_t i = 0; i < n_; ++i) mx = std::max(mx, part[b * n_ + i].size());
    }
    if (mx > stride_) grow(static_cast<int>(mx));
    if (d_rows_.empty()) d_rows_.allocate(std::max<std::size_t>(B_ * n_ * stride_, 1));
    std::vector<int> rows(B_ * n_ * stride_), counts(B_ * n_);
    for (std::size_t r = 0; r < B_ * n_; ++r) {
      std::sort(part[r].begin(), part[r].end());
      std::copy(part[r].begin(), part[r].end(), rows.begin() + static_cast<std::ptrdiff_t>(r * stride_));
      counts[r] = static_cast<int>(part[r].size());
    }
    GF_CUDA_TRY(cudaMemcpy(d_rows_.data(), rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice));
    GF_CUDA_TRY(cudaMemcpy(d_counts_.data(), counts.data(), counts.size() * sizeof(int), cudaMemcpyHostToDevice));
    GF_CUDA_TRY(cudaMemset(d_max_.data(), 0, sizeof(int)));
  }

  const AnnealTerms& t_;
  std::size_t n_, B_, m_;
  bool host_lists_;
  std::size_t n_pairs_ = 0, n_chir_ = 0, n_planes_ = 0, n_dih_ = 0, n_ramas_ = 0, n_noes_ = 0;
  std::size_t stride_ = 64;  // partners per atom row; grown on demand
  double rmax_ = 0;
  RamaBoxesD boxes_{};
  gemflow::cuda::DeviceBuffer<PairTerm> d_pairs_;
  gemflow::cuda::DeviceBuffer<ChiralTermD> d_chir_;
  gemflow::cuda::DeviceBuffer<TorsionTermD> d_planes_;
  gemflow::cuda::DeviceBuffer<DihedralTermD> d_dih_;
  gemflow::cuda::DeviceBuffer<RamaTermD> d_ramas_;
  gemflow::cuda::DeviceBuffer<NoeTermD> d_noes_;
  gemflow::cuda::DeviceBuffer<SymmetryTermD> d_sym_;
  std::size_t n_sym_ = 0;
  gemflow::cuda::DeviceBuffer<int> d_noe_pairs_, d_excl_off_, d_excl_, d_rows_, d_counts_, d_flag_, d_max_, d_bad_;
  gemflow::cuda::DeviceBuffer<double> d_radius_, d_x_, d_v_, d_f_, d_built_, d_x0_, d_v0_, d_e_, d_ke_;
  gemflow::cuda::DeviceBuffer<unsigned char> d_polar_, d_acc_;
};

// Runs f(k) for k < count in `threads` host threads (0: hardware threads); rethrows the first
// exception (by index) after every thread has finished.
void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& f) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next.fetch_add(1); k < count; k = next.fetch_add(1)) {
      try {
        f(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

MdBatchResult md_steps_batch(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                             std::size_t batch, const MdOptions& o, int device, std::size_t initial_row_capacity) {
  const std::size_t n = t.n, B = batch, m = 3 * n * B;
  if (x.size() != m || v.size() != m) throw std::invalid_argument("md_steps_batch: coordinates are not B×n×3");
  if (B == 0 || n == 0) return {};
  BatchMd md(t, B, device, false);
  md.set_state(x, v);
  if (initial_row_capacity) md.set_stride(initial_row_capacity);
  // md_steps(): rebuilt every o.rebuild_every steps, never when 0
  md.run(w, o.t_bath, o.dt, o.steps, Rebuild{o.rebuild_every, false}, "md", {});
  MdBatchResult res;
  res.energy = md.energies(w);
  md.get_state(x, v);
  return res;
}

std::vector<std::vector<std::array<std::size_t, 2>>> repel_pairs_batch(const AnnealTerms& t, std::span<const double> x,
                                                                       std::size_t batch, double scale, int device,
                                                                       std::size_t initial_row_capacity) {
  if (x.size() != 3 * t.n * batch) throw std::invalid_argument("repel_pairs_batch: coordinates are not B×n×3");
  if (batch == 0 || t.n == 0) return std::vector<std::vector<std::array<std::size_t, 2>>>(batch);
  BatchMd md(t, batch, device, false);
  std::vector<double> v(x.size(), 0.0);
  md.set_state(x, v);
  if (initial_row_capacity) md.set_stride(initial_row_capacity);
  md.build_all(scale);
  return md.lists();
}

std::vector<AnnealResult> anneal_batch(const AnnealTerms& t, const std::vector<std::vector<double>>& starts,
                                       const std::vector<std::uint64_t>& seeds, const AnnealOptions& o, int device,
                                       const AnnealBatchOptions& bo) {
  const std::size_t B = starts.size(), n3 = 3 * t.n;
  if (seeds.size() != B) throw std::invalid_argument("anneal_batch: one seed per start");
  for (const auto& s : starts)
    if (s.size() != n3) throw std::invalid_argument("anneal_batch: a start is not n×3");
  if (B == 0) return {};
  using clock = std::chrono::steady_clock;
  AnnealBatchTimes times;
  auto t0 = clock::now();
  std::vector<double> x(B * n3), v(B * n3);
  parallel_for(B, bo.threads, [&](std::size_t b) {
    AnnealOptions ob = o;
    ob.seed = seeds[b];
    std::vector<double> xb = starts[b], vb;
    anneal_prepare(t, ob, xb, vb);
    std::copy(xb.begin(), xb.end(), x.begin() + static_cast<std::ptrdiff_t>(b * n3));
    std::copy(vb.begin(), vb.end(), v.begin() + static_cast<std::ptrdiff_t>(b * n3));
  });
  times.prepare = seconds_since(t0);
  t0 = clock::now();
  const auto stages = anneal_stages(o);
  std::size_t total = 0, steps = 0;
  for (const auto& st : stages) total += st.steps;
  if (t.n > 0) {
    BatchMd md(t, B, device, bo.host_pair_lists);
    md.set_state(x, v);
    for (const auto& st : stages) {
      // as anneal(): lists rebuilt when an atom moved more than half the skin; the host-list
      // baseline every 20 steps
      const Rebuild rb = bo.host_pair_lists ? Rebuild{20, false} : Rebuild{0, true};
      md.run(st.weights, st.temperature, o.dt, st.steps, rb, st.hot ? "hot" : "cooling", [&](std::size_t k) {
        return !bo.progress ||
               bo.progress(static_cast<double>(steps + k) / static_cast<double>(std::max<std::size_t>(total, 1)));
      });
      steps += st.steps;
    }
    md.get_state(x, v);
  }
  times.md = seconds_since(t0);
  t0 = clock::now();
  std::vector<AnnealResult> out(B);
  parallel_for(B, bo.threads, [&](std::size_t b) {
    std::vector<double> xb(x.begin() + static_cast<std::ptrdiff_t>(b * n3),
                           x.begin() + static_cast<std::ptrdiff_t>((b + 1) * n3));
    out[b] = anneal_finish(t, o, std::move(xb));
    out[b].steps = total;
  });
  times.finish = seconds_since(t0);
  if (bo.times) *bo.times = times;
  return out;
}

}  // namespace gemflow::distgeom::cuda
