// Batched restrained MD on a CUDA device (see gemflow/distgeom/anneal_cuda.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gemflow/cuda/buffer.hpp"
#include "gemflow/cuda/check.hpp"
#include "gemflow/distgeom/anneal_cuda.hpp"

namespace gemflow::distgeom::cuda {
namespace {

constexpr double kMass = 100.0, kForceToAccel = 418.4, kBoltzmann = 0.0019872041, kTau = 0.05;
constexpr double kNoeSwitch = 0.5, kHbondR = 2.0, kPi = 3.14159265358979323846;
constexpr int kThreads = 256;

struct PairTerm {
  int i, j;
  double d0, k;
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

__global__ void pair_kernel(const PairTerm* t, int nt, int n, int B, const double* x, double* f, double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= static_cast<long long>(nt) * B) return;
  const int b = static_cast<int>(id / nt);
  const PairTerm p = t[id % nt];
  const double* X = x + 3LL * n * b;
  double* F = f + 3LL * n * b;
  const double dx = X[3 * p.i] - X[3 * p.j], dy = X[3 * p.i + 1] - X[3 * p.j + 1], dz = X[3 * p.i + 2] - X[3 * p.j + 2];
  const double d = sqrt(dx * dx + dy * dy + dz * dz), r = d - p.d0;
  atomicAdd(&e[b], p.k * r * r);
  if (d <= 0) return;
  const double c = 2 * p.k * r / d;
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
  atomicAdd(&e[b], k * r * r);
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
  atomicAdd(&e[b], en);
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
  atomicAdd(&e[b], kc * r.w * delta * delta);
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
  atomicAdd(&e[b], k * best);
  double* F = f + 3LL * n * b;
  torsion_forces(F, r.cp, r.n, r.ca, r.c, 2 * k * dphi, pa, pb, pc, pd);
  torsion_forces(F, r.n, r.ca, r.c, r.nn, 2 * k * dpsi, sa, sb, sc, sd);
}

// pairs: (structure, i, j) triples
__global__ void repel_kernel(const int* pairs, long long np, int n, const double* radius, const unsigned char* polar_h,
                             const unsigned char* acceptor, double k, double scale, const double* x, double* f,
                             double* e) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= np) return;
  const int b = pairs[3 * id], i = pairs[3 * id + 1], j = pairs[3 * id + 2];
  const double* X = x + 3LL * n * b;
  const double R =
      scale * ((polar_h[i] && acceptor[j]) || (polar_h[j] && acceptor[i]) ? kHbondR : radius[i] + radius[j]);
  const double dx = X[3 * i] - X[3 * j], dy = X[3 * i + 1] - X[3 * j + 1], dz = X[3 * i + 2] - X[3 * j + 2];
  const double s = R * R - (dx * dx + dy * dy + dz * dz);
  if (s <= 0) return;
  atomicAdd(&e[b], k * s * s);
  const double c = -4 * k * s;
  double* F = f + 3LL * n * b;
  add3(F, i, c * dx, c * dy, c * dz);
  add3(F, j, -c * dx, -c * dy, -c * dz);
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
  atomicAdd(&e[b], k * pen);
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
  atomicAdd(&e[b], k * r * r);
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

// v -= ½ h c f; x += h v (first half) — or v -= ½ h c f and the kinetic energy (second half)
__global__ void kick_drift_kernel(double* x, double* v, const double* f, long long m, double hc, double h) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= m) return;
  v[id] -= 0.5 * hc * f[id];
  x[id] += h * v[id];
}

__global__ void kick_kernel(double* v, const double* f, long long m, int per, double hc, double* ke) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= m) return;
  v[id] -= 0.5 * hc * f[id];
  atomicAdd(&ke[id / per], v[id] * v[id]);
}

__global__ void scale_kernel(double* v, long long m, int per, const double* ke, double h, double t_bath) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= m) return;
  const double temp = kMass * ke[id / per] / (kForceToAccel * kBoltzmann * per);
  double lambda = sqrt(1 + h / kTau * (t_bath / fmax(temp, 1e-6) - 1));
  lambda = fmin(fmax(lambda, 0.8), 1.25);
  v[id] *= lambda;
}

}  // namespace

MdBatchResult md_steps_batch(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                             std::size_t batch, const MdOptions& o, int device) {
  const std::size_t n = t.n, B = batch, m = 3 * n * B;
  if (x.size() != m || v.size() != m) throw std::invalid_argument("md_steps_batch: coordinates are not B×n×3");
  if (B == 0 || n == 0) return {};
  GF_CUDA_TRY(cudaSetDevice(device));
  // flatten the terms
  std::vector<PairTerm> pairs;
  for (const auto& p : t.bonds) pairs.push_back({static_cast<int>(p.i), static_cast<int>(p.j), p.d0, w.bond});
  for (const auto& p : t.angles) pairs.push_back({static_cast<int>(p.i), static_cast<int>(p.j), p.d0, w.angle});
  std::vector<ChiralTermD> chir;
  for (const auto& c : t.chirals)
    chir.push_back({static_cast<int>(c.c), static_cast<int>(c.a), static_cast<int>(c.b), static_cast<int>(c.d), c.v0});
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
  RamaBoxesD boxes{};
  for (int q = 0; q < 3; ++q) {
    const RamaBox& rb = kRamaBoxes[q];
    const double lim[5] = {rb.phi_lower, rb.phi_upper, rb.psi_lower, rb.psi_upper, rb.offset};
    for (int c = 0; c < 5; ++c) boxes.b[q][c] = lim[c] * (kPi / 180);  // as anneal.cpp
  }
  std::vector<NoeTermD> noes;
  std::vector<int> noe_pairs;
  for (const auto& r : t.noes) {
    noes.push_back(
        {static_cast<int>(noe_pairs.size() / 2), static_cast<int>(r.pairs.size()), r.single ? 1 : 0, r.lower, r.upper});
    for (auto [i, j] : r.pairs) noe_pairs.insert(noe_pairs.end(), {static_cast<int>(i), static_cast<int>(j)});
  }
  std::vector<SymmetryTermD> sym;
  for (const auto& q : t.symmetry)
    sym.push_back({static_cast<int>(q.a), static_cast<int>(q.b), static_cast<int>(q.c), static_cast<int>(q.d)});
  auto upload = [](const auto& host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    gemflow::cuda::DeviceBuffer<T> d(std::max<std::size_t>(host.size(), 1));
    if (!host.empty()) GF_CUDA_TRY(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  };
  auto d_pairs = upload(pairs);
  auto d_chir = upload(chir);
  auto d_planes = upload(planes);
  auto d_dih = upload(dih);
  auto d_ramas = upload(ramas);
  auto d_noes = upload(noes);
  auto d_noe_pairs = upload(noe_pairs);
  auto d_sym = upload(sym);
  auto d_radius = upload(t.radius);
  auto d_polar = upload(t.polar_h);
  auto d_acc = upload(t.acceptor);
  std::vector<double> hx(x.begin(), x.end()), hv(v.begin(), v.end());
  auto d_x = upload(hx);
  auto d_v = upload(hv);
  gemflow::cuda::DeviceBuffer<double> d_f(m), d_e(B), d_ke(B);
  gemflow::cuda::DeviceBuffer<int> d_rep;
  long long n_rep = 0;
  auto rebuild = [&] {
    GF_CUDA_TRY(cudaMemcpy(hx.data(), d_x.data(), m * sizeof(double), cudaMemcpyDeviceToHost));
    std::vector<int> flat;
    for (std::size_t b = 0; b < B; ++b)
      for (auto [i, j] : repel_pairs(t, std::span<const double>(hx.data() + 3 * n * b, 3 * n), w.rep_scale))
        flat.insert(flat.end(), {static_cast<int>(b), static_cast<int>(i), static_cast<int>(j)});
    n_rep = static_cast<long long>(flat.size() / 3);
    d_rep = upload(flat);
  };
  const int ni = static_cast<int>(n), Bi = static_cast<int>(B);
  auto forces = [&] {
    GF_CUDA_TRY(cudaMemset(d_f.data(), 0, m * sizeof(double)));
    GF_CUDA_TRY(cudaMemset(d_e.data(), 0, B * sizeof(double)));
    if (!pairs.empty()) {
      pair_kernel<<<blocks(pairs.size() * B), kThreads>>>(d_pairs.data(), static_cast<int>(pairs.size()), ni, Bi,
                                                          d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!chir.empty()) {
      chiral_kernel<<<blocks(chir.size() * B), kThreads>>>(d_chir.data(), static_cast<int>(chir.size()), ni, Bi,
                                                           w.chiral, d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!planes.empty()) {
      plane_kernel<<<blocks(planes.size() * B), kThreads>>>(d_planes.data(), static_cast<int>(planes.size()), ni, Bi,
                                                            w.plane, d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!dih.empty()) {
      dihedral_kernel<<<blocks(dih.size() * B), kThreads>>>(d_dih.data(), static_cast<int>(dih.size()), ni, Bi, w.cdih,
                                                            d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!ramas.empty() && w.rama > 0) {
      rama_kernel<<<blocks(ramas.size() * B), kThreads>>>(d_ramas.data(), static_cast<int>(ramas.size()), ni, Bi,
                                                          w.rama, boxes, d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (n_rep > 0 && w.rep > 0) {
      repel_kernel<<<blocks(static_cast<std::size_t>(n_rep)), kThreads>>>(
          d_rep.data(), n_rep, ni, d_radius.data(), d_polar.data(), d_acc.data(), w.rep, w.rep_scale, d_x.data(),
          d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!noes.empty()) {
      noe_kernel<<<blocks(noes.size() * B), kThreads>>>(d_noes.data(), static_cast<int>(noes.size()),
                                                        d_noe_pairs.data(), ni, Bi, w.noe, d_x.data(), d_f.data(),
                                                        d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
    if (!sym.empty() && w.sym > 0) {
      symmetry_kernel<<<blocks(sym.size() * B), kThreads>>>(d_sym.data(), static_cast<int>(sym.size()), ni, Bi, w.sym,
                                                            d_x.data(), d_f.data(), d_e.data());
      GF_CUDA_CHECK_LAUNCH();
    }
  };
  const double h = o.dt, hc = o.dt * kForceToAccel / kMass;
  const long long mm = static_cast<long long>(m);
  const int per = static_cast<int>(3 * n);
  rebuild();
  forces();
  for (std::size_t s = 0; s < o.steps; ++s) {
    kick_drift_kernel<<<blocks(m), kThreads>>>(d_x.data(), d_v.data(), d_f.data(), mm, hc, h);
    GF_CUDA_CHECK_LAUNCH();
    if (o.rebuild_every && (s + 1) % o.rebuild_every == 0) rebuild();
    forces();
    GF_CUDA_TRY(cudaMemset(d_ke.data(), 0, B * sizeof(double)));
    kick_kernel<<<blocks(m), kThreads>>>(d_v.data(), d_f.data(), mm, per, hc, d_ke.data());
    GF_CUDA_CHECK_LAUNCH();
    scale_kernel<<<blocks(m), kThreads>>>(d_v.data(), mm, per, d_ke.data(), h, o.t_bath);
    GF_CUDA_CHECK_LAUNCH();
  }
  forces();
  MdBatchResult res;
  res.energy.resize(B);
  GF_CUDA_TRY(cudaMemcpy(res.energy.data(), d_e.data(), B * sizeof(double), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(x.data(), d_x.data(), m * sizeof(double), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(v.data(), d_v.data(), m * sizeof(double), cudaMemcpyDeviceToHost));
  return res;
}

std::vector<AnnealResult> anneal_batch(const AnnealTerms& t, const std::vector<std::vector<double>>& starts,
                                       const std::vector<std::uint64_t>& seeds, const AnnealOptions& o, int device) {
  const std::size_t B = starts.size(), n3 = 3 * t.n;
  if (seeds.size() != B) throw std::invalid_argument("anneal_batch: one seed per start");
  std::vector<double> x(B * n3), v(B * n3);
  for (std::size_t b = 0; b < B; ++b) {
    AnnealOptions ob = o;
    ob.seed = seeds[b];
    std::vector<double> xb = starts[b], vb;
    anneal_prepare(t, ob, xb, vb);
    std::copy(xb.begin(), xb.end(), x.begin() + static_cast<std::ptrdiff_t>(b * n3));
    std::copy(vb.begin(), vb.end(), v.begin() + static_cast<std::ptrdiff_t>(b * n3));
  }
  std::size_t steps = 0;
  for (const auto& st : anneal_stages(o)) {
    MdOptions mo;
    mo.steps = st.steps;
    mo.dt = o.dt;
    mo.t_bath = st.temperature;
    mo.rebuild_every = 20;
    md_steps_batch(t, st.weights, x, v, B, mo, device);
    steps += st.steps;
  }
  std::vector<AnnealResult> out;
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> xb(x.begin() + static_cast<std::ptrdiff_t>(b * n3),
                           x.begin() + static_cast<std::ptrdiff_t>((b + 1) * n3));
    out.push_back(anneal_finish(t, o, std::move(xb)));
    out.back().steps = steps;
  }
  return out;
}

}  // namespace gemflow::distgeom::cuda
