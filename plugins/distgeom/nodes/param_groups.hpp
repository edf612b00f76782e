#pragma once
// Parameter groups of the distance-geometry steps (gemflow::ParamGroup): distgeom.metrize,
// distgeom.embed and distgeom.refine declare their step's parameters through them, and
// distgeom.embed_and_refine, which runs the three steps, declares the same groups, so that one
// declaration (names, limits, docs) serves both. The YAML names stay as they were:
// embed_and_refine calls metrize's `method` and `atoms` `metrize` and `metrize_atoms`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <gemflow/distgeom/embedding.hpp>
#include <gemflow/distgeom/metrize.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/node.hpp>

namespace gemflow::distgeom::nodes {

/// How to draw distances inside the smoothed bounds (MetrizeOptions without the seed).
struct MetrizeParams : ParamGroup {
  enum class Method { None, Partial };
  explicit MetrizeParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        method{
            n,
            name("method"),
            Method::None,
            {{Method::None, "none"}, {Method::Partial, "partial"}},
            {.doc = "none: independent uniform picks; partial: re-smooth after each of `" + name("atoms") + "` atoms"}},
        atoms{n, name("atoms"), 4, {.doc = "partial: number of atoms metrized"}} {
    done();
  }
  Choice<Method> method;
  Param<std::size_t> atoms;

  [[nodiscard]] MetrizeOptions options() const {
    MetrizeOptions o;
    o.method = method.value() == Method::Partial ? MetrizeMethod::Partial : MetrizeMethod::None;
    o.atoms = atoms.value();
    return o;
  }
};

/// How to embed a metric matrix: method, dimension, Cholesky rank and pivot candidates.
struct EmbedParams : ParamGroup {
  enum class Method { Cholesky, Eigen };
  explicit EmbedParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        method{n,
               name("method"),
               Method::Cholesky,
               {{Method::Cholesky, "cholesky"}, {Method::Eigen, "eigen"}},
               {.doc = "Factorisation of the metric matrix: pivoted Cholesky or the top eigenpairs"}},
        dimensions{n,
                   name("dimensions"),
                   4,
                   {.min = 3, .max = 4, .doc = "3, or 4 for a 4D embedding squeezed by the refinement"}},
        rank{n,
             name("rank"),
             0,
             {.doc = "cholesky: pivoted Cholesky columns k, used as min(atoms, max(dimensions, k)); 0 = dimensions"}},
        pivot_fraction{n,
                       name("pivot_fraction"),
                       1.0,
                       {.min = 0.01,
                        .max = 1.0,
                        .doc = "cholesky: pivots only among this fraction of atoms with the tightest (smoothed) "
                               "bounds (1 = every atom: plain complete pivoting)"}} {
    done();
  }
  Choice<Method> method;
  Param<std::size_t> dimensions;
  Param<std::size_t> rank;
  Param<double> pivot_fraction;

  [[nodiscard]] bool cholesky() const { return method.value() == Method::Cholesky; }
  [[nodiscard]] EmbedMethod embed_method() const { return cholesky() ? EmbedMethod::Cholesky : EmbedMethod::Eigen; }
};

/// How to refine: L-BFGS iterations, chiral weight, mirror trial.
struct RefineParams : ParamGroup {
  explicit RefineParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        max_iterations{n, name("max_iterations"), 3000, {.min = 1, .doc = "L-BFGS iterations per hand, all stages"}},
        w_chiral{n, name("w_chiral"), 0.1, {.min = 0, .doc = "Weight of the chiral volume terms (per Å⁶)"}},
        mirror_trial{n,
                     name("mirror_trial"),
                     true,
                     {.doc = "Also refine the mirror image of the embedding; keep the lower DG error"}} {
    done();
  }
  Param<std::size_t> max_iterations;
  Param<double> w_chiral;
  Param<bool> mirror_trial;

  [[nodiscard]] RefineOptions options() const {
    RefineOptions o;
    o.max_iterations = max_iterations.value();
    o.w_chiral = w_chiral.value();
    return o;
  }
};

}  // namespace gemflow::distgeom::nodes
