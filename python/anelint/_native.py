# SPDX-License-Identifier: MIT
"""ctypes declarations of the part of libanelint's C API (include/anelint.h) the
Python package uses, and where the shared library is found.

Why ctypes over the shared library, not a C extension: the shared library
exports exactly the public API (AL_API), which is what a binding should use;
ctypes is in the standard library, so `pip install ./python` compiles nothing
Python-specific (no python3-dev, no per-Python-version build, the same package
for every CPython 3), and the library it loads is the one `make` builds and
`make install` installs. The price is that the structs below mirror the header
by hand; python/tests/test_anelint.py exercises every one of them."""
import ctypes
import ctypes.util
import glob
import os
import sys

c_bool, c_int, c_size_t, c_uint32, c_uint64 = (ctypes.c_bool, ctypes.c_int, ctypes.c_size_t,
                                               ctypes.c_uint32, ctypes.c_uint64)
c_char_p, c_void_p, c_double, POINTER = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_double, ctypes.POINTER

AL_UNIT_COUNT = 5  # enum al_unit: ANE, GPU, CPU, GPU_OR_CPU, NONE
AL_DT_FP32, AL_DT_STRING = 11, 2
AL_EQUIV = {"exact": 0, "reassociate": 1, "approximate": 2}


class Diag(ctypes.Structure):  # struct al_diag
    c_name = "al_diag"
    _fields_ = [("severity", c_int), ("file", c_char_p), ("offset", c_uint64), ("where", c_char_p),
                ("node", c_char_p), ("msg", c_char_p)]


class Where(ctypes.Structure):  # struct al_where: where a model runs
    c_name = "al_where"
    _fields_ = [("target", c_void_p), ("os", c_void_p), ("compute_units", c_int)]


# The options carry a struct al_where in a union with its fields' names: here the
# member `where`, its fields readable directly (_anonymous_), its padding kept.
class CheckOpts(ctypes.Structure):  # struct al_check_opts
    c_name = "al_check_opts"
    _anonymous_ = ("where",)
    _fields_ = [("where", Where), ("user_rules", c_void_p),
                ("rule_on", c_void_p), ("rule_on_ctx", c_void_p)]


class PlanOpts(ctypes.Structure):  # struct al_plan_opts
    c_name = "al_plan_opts"
    _anonymous_ = ("where",)
    _fields_ = [("where", Where), ("policy", c_int),
                ("switch_us", (c_double * AL_UNIT_COUNT) * AL_UNIT_COUNT), ("max_fixes", c_uint32),
                ("no_fixes", c_bool), ("no_work_floor", c_bool)]


class ReportOpts(ctypes.Structure):  # struct al_report_opts
    c_name = "al_report_opts"
    _fields_ = [("color", c_bool), ("show_consts", c_bool), ("shapes", c_bool), ("fail_on", c_int),
                ("check", POINTER(CheckOpts)), ("plan", POINTER(PlanOpts)), ("all_targets", c_bool),
                ("all_releases", c_bool), ("plans", c_bool), ("all_layers", c_bool), ("accepted", c_void_p),
                ("accepted_ctx", c_void_p), ("base", c_char_p), ("columns", c_void_p), ("n_columns", c_size_t),
                ("information_uri", c_char_p), ("deployment_range", c_bool)]


class Column(ctypes.Structure):  # struct al_column
    c_name = "al_column"
    _fields_ = [("target", c_void_p), ("os", c_void_p)]


class WhereSpec(ctypes.Structure):  # struct al_where_spec: what al_where_parse read
    c_name = "al_where_spec"
    _fields_ = [("where", Where), ("all_targets", c_bool), ("all_releases", c_bool),
                ("columns", Column * 32), ("n_columns", c_size_t)]


AL_WHERE_ONE = 1
AL_SINK_CHECK, AL_SINK_INFO, AL_SINK_PLAN = 0, 1, 2


class ModelsRun(ctypes.Structure):  # struct al_models_run: check, plan, report, info as one call
    c_name = "al_models_run"
    _fields_ = [("cmd", c_int), ("sink", c_void_p), ("paths", POINTER(c_char_p)), ("n_paths", c_size_t),
                ("function", c_char_p), ("models", POINTER(c_void_p)), ("where", WhereSpec),
                ("check", CheckOpts), ("plan", PlanOpts), ("report", ReportOpts), ("out", c_void_p),
                ("diags", c_void_p), ("fails", c_bool), ("status", c_int), ("ctx", c_void_p)] + \
        [(hook, c_void_p) for hook in ("errors", "note", "has_own", "accepts", "own", "evidence", "fail_on",
                                       "baseline_write", "baseline_begin", "baseline_add", "baseline_end")] + \
        [("records_baseline", c_bool), ("open", c_void_p), ("close", c_void_p), ("outcome_floor", c_int)]


class ReportItem(ctypes.Structure):  # struct al_report_item
    c_name = "al_report_item"
    _fields_ = [("path", c_char_p), ("model", c_void_p), ("diags", c_void_p), ("status", c_int),
                ("analysis", c_void_p), ("comparison", c_void_p)]


SINK_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(ReportItem), c_size_t, POINTER(ReportOpts))


class Sink(ctypes.Structure):  # struct al_sink
    c_name = "al_sink"
    _fields_ = [("name", c_char_p), ("check", SINK_FN), ("info", SINK_FN), ("plan", SINK_FN),
                ("extensions", c_char_p), ("shows_plans", c_bool),
                ("stream_begin", c_void_p), ("stream_model", c_void_p), ("stream_end", c_void_p)]


class NamedTensor(ctypes.Structure):  # struct al_named_tensor
    c_name = "al_named_tensor"
    _fields_ = [("name", c_char_p), ("t", c_void_p)]


class RunOpts(ctypes.Structure):  # struct al_run_opts
    c_name = "al_run_opts"
    _fields_ = [("precision", c_int), ("observe", c_void_p), ("observe_ctx", c_void_p),
                ("max_bytes", c_uint64), ("max_steps", c_uint64), ("threads", c_int),
                ("max_work", c_uint64), ("held_bytes", c_void_p), ("function", c_char_p)]


class ProofDiff(ctypes.Structure):  # struct al_proof_diff
    c_name = "al_proof_diff"
    _fields_ = [("name", c_char_p), ("identical", c_bool), ("max_abs", c_double), ("ref_max", c_double),
                ("rel", c_double), ("pass_", c_bool), ("why", c_char_p), ("why_seen", c_bool),
                ("runs", c_int), ("got_max", c_double), ("collapsed", c_bool), ("overflowed", c_bool)]


class Proof(ctypes.Structure):  # struct al_proof
    c_name = "al_proof"
    _fields_ = [("proved", c_bool), ("ok", c_bool), ("runs", c_int), ("n_values", c_size_t),
                ("why", ctypes.c_char * 256), ("diffs", POINTER(ProofDiff)), ("n_diffs", c_size_t)]


class ProofOpts(ctypes.Structure):  # struct al_proof_opts
    c_name = "al_proof_opts"
    _fields_ = [("equiv", c_int), ("inputs", POINTER(NamedTensor)), ("n_inputs", c_size_t),
                ("seed", c_uint64), ("max_bytes", c_uint64), ("max_work", c_uint64), ("threads", c_int),
                ("tolerance", c_double)]


class Pass(ctypes.Structure):  # struct al_pass
    c_name = "al_pass"
    _fields_ = [("name", c_char_p), ("rule", c_char_p), ("equiv", c_int), ("from_", c_char_p),
                ("what", c_char_p)]


class Rewrite(ctypes.Structure):  # struct al_rewrite (node: struct al_node *, its name first after index)
    c_name = "al_rewrite"
    _fields_ = [("pass_", POINTER(Pass)), ("node", c_void_p), ("applied", c_bool), ("after", c_char_p),
                ("why_not", c_char_p), ("layers", POINTER(c_char_p)), ("n_layers", c_uint32),
                ("stays_off", c_char_p), ("also_replaces", c_char_p), ("model_level", c_bool),
                ("off_until_next_round", c_bool)]


class NodeHead(ctypes.Structure):  # the first fields of struct al_node
    c_name = "al_node"  # a prefix: the fields it needs
    _fields_ = [("index", c_uint32), ("name", c_char_p), ("type", c_char_p)]


class SurgeryOpts(ctypes.Structure):  # struct al_surgery_opts
    c_name = "al_surgery_opts"
    _fields_ = [("allow", c_int), ("skip", POINTER(c_char_p)), ("n_skip", c_size_t),
                ("shapes", c_void_p), ("n_shapes", c_size_t)]




AL_FIX_PROOF = {"auto": 0, "whole": 1, "region": 2}


class InputShape(ctypes.Structure):  # struct al_input_shape (fix's --shape / --enumerate)
    c_name = "al_input_shape"
    _fields_ = [("input", c_char_p), ("use_default", c_bool), ("dims", POINTER(ctypes.c_int64)),
                ("rank", c_uint32), ("n_shapes", c_uint32)]


class FixOpts(ctypes.Structure):  # struct al_fix_opts
    c_name = "al_fix_opts"
    _fields_ = [("input", c_char_p), ("output", c_char_p), ("dry_run", c_bool), ("in_place", c_bool),
                ("allow", c_int), ("tolerance", c_double), ("max_rounds", c_int), ("proof", c_int),
                ("inputs", c_char_p), ("function", c_char_p), ("shapes", POINTER(InputShape)),
                ("n_shapes", c_size_t), ("skip", POINTER(c_char_p)), ("n_skip", c_size_t), ("check", CheckOpts), ("seed", c_uint64),
                ("max_bytes", c_uint64), ("max_work", c_uint64), ("threads", c_int)]


class FixResult(ctypes.Structure):  # struct al_fix_result (the rounds are read as al_fix_write_json's JSON)
    c_name = "al_fix_result"
    _fields_ = [("exit_code", c_int), ("decided", c_bool), ("usage", ctypes.c_char * 256), ("input", c_char_p),
                ("output", c_char_p), ("allow", c_int), ("tolerance", c_double), ("dry_run", c_bool),
                ("rounds", c_void_p), ("n_rounds", c_int), ("max_rounds", c_int), ("fixed_point", c_bool),
                ("pending", c_size_t), ("applied", c_size_t), ("shown", c_int), ("refused", c_bool),
                ("written", c_bool), ("state", c_void_p)]


class CiSettings(ctypes.Structure):  # struct al_ci_settings
    c_name = "al_ci_settings"
    _fields_ = [("target", c_char_p), ("os", c_char_p), ("compute_units", c_char_p), ("policy", c_char_p),
                ("fail_on", c_char_p), ("switch_cost", c_char_p), ("rules", c_char_p), ("baseline", c_char_p)]


class CiOpts(ctypes.Structure):  # struct al_ci_opts
    c_name = "al_ci_opts"
    _fields_ = [("config", c_char_p), ("no_config", c_bool), ("first_path", c_char_p),
                ("select", POINTER(c_char_p)), ("ignore", POINTER(c_char_p)), ("n_select", c_size_t),
                ("n_ignore", c_size_t), ("write_baseline", c_char_p), ("given", CiSettings)]



class RunInputs(ctypes.Structure):  # struct al_run_inputs
    c_name = "al_run_inputs"
    _fields_ = [("values", POINTER(NamedTensor)), ("n_values", c_size_t), ("files", POINTER(c_char_p)),
                ("n_files", c_size_t), ("dir", c_char_p), ("states", POINTER(c_char_p)), ("n_states", c_size_t),
                ("random", c_bool), ("seed", c_uint64)]


class ExecOpts(ctypes.Structure):  # struct al_exec_opts: run, verify, fp16
    c_name = "al_exec_opts"
    _fields_ = [("model", c_char_p), ("model_b", c_char_p), ("open_a", c_void_p), ("open_b", c_void_p),
                ("in_", RunInputs), ("precision", c_int), ("tol", c_double), ("max_bytes", c_uint64),
                ("max_work", c_uint64), ("threads", c_int), ("function", c_char_p), ("expect", c_char_p),
                ("out", c_char_p), ("protect", POINTER(c_char_p)), ("n_protect", c_size_t), ("steps", c_uint64),
                ("repeat", c_uint64), ("keep_values", c_bool), ("top", c_uint64)]



class CompareOpts(ctypes.Structure):  # struct al_compare_opts: compare as one call
    c_name = "al_compare_opts"
    _fields_ = [("model", c_char_p), ("evidence", POINTER(c_char_p)), ("n_evidence", c_size_t),
                ("evidence_format", c_int), ("where", Where), ("rules", c_void_p), ("json", c_bool),
                ("fail_under", c_double), ("write_evidence", c_int), ("output", c_char_p)]


class CompareResult(ctypes.Structure):  # struct al_compare_result (doc: the library's, freed by it)
    c_name = "al_compare_result"
    _fields_ = [("exit_code", c_int), ("doc", c_void_p), ("n_doc", c_size_t), ("written", c_bool),
                ("matched", c_size_t), ("agreed", c_size_t), ("agreement", c_double), ("under", c_bool)]


MIRRORS = (Diag, Where, CheckOpts, PlanOpts, ReportOpts, Column, WhereSpec, ModelsRun, ReportItem, Sink,
           NamedTensor, RunOpts, ProofDiff, Proof, ProofOpts, Pass, Rewrite, SurgeryOpts, NodeHead, InputShape,
           FixOpts, FixResult, CiSettings, CiOpts, RunInputs, ExecOpts, CompareOpts, CompareResult)


def _candidates():
    env = os.environ.get("ANELINT_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    names = ("libanelint.so.*", "libanelint.*.dylib", "libanelint.so", "libanelint.dylib")
    # a copy bundled by `pip install ./python`, then the source tree's build/
    for d in (os.path.join(here, "_lib"), os.path.join(here, "..", "..", "build")):
        for n in names:
            yield from sorted(glob.glob(os.path.join(d, n)))
    found = ctypes.util.find_library("anelint")  # make install
    if found:
        yield found


path = None  # the library load() opened


def load():
    global path
    errors = []
    for cand in _candidates():
        try:
            lib = ctypes.CDLL(cand)
            path = cand
            break
        except OSError as e:
            errors.append(f"{cand}: {e}")
    else:
        raise ImportError("anelint: cannot find libanelint (build it with `make` at the repository root, "
                          "`make install` it, or set ANELINT_LIBRARY)" + ("; " + "; ".join(errors) if errors else ""))
    sig = {
        "al_version": (c_char_p, []),
        "al_status_str": (c_char_p, [c_int]),
        "al_diags_new": (c_void_p, []),
        "al_diags_free": (None, [c_void_p]),
        "al_diags_count": (c_size_t, [c_void_p]),
        "al_diags_get": (POINTER(Diag), [c_void_p, c_size_t]),
        "al_model_open": (c_int, [c_char_p, POINTER(c_void_p), c_void_p]),
        "al_model_open_buffer": (c_int, [c_void_p, c_size_t, c_void_p, c_size_t, c_char_p,
                                         POINTER(c_void_p), c_void_p]),
        "al_model_free": (None, [c_void_p]),
        "al_model_check": (c_int, [c_void_p, POINTER(CheckOpts), c_void_p]),
        "al_target_find": (c_void_p, [c_char_p]),
        "al_release_find": (c_void_p, [c_char_p]),
        "al_report_analyze": (c_int, [POINTER(ReportItem), c_size_t, POINTER(ReportOpts), c_void_p]),
        "al_where_parse": (c_int, [c_char_p, c_char_p, c_char_p, ctypes.c_uint, POINTER(WhereSpec), c_void_p]),
        "al_models_run": (c_int, [POINTER(ModelsRun)]),
        "al_analysis_free": (None, [c_void_p]),
        "al_sink_by_name": (POINTER(Sink), [c_char_p]),
        "al_tensor_new": (c_void_p, [c_int, c_int, POINTER(ctypes.c_int64)]),
        "al_tensor_free": (None, [c_void_p]),
        "al_tensor_dtype": (c_int, [c_void_p]),
        "al_tensor_rank": (c_int, [c_void_p]),
        "al_tensor_dims": (POINTER(ctypes.c_int64), [c_void_p]),
        "al_tensor_count": (c_size_t, [c_void_p]),
        "al_tensor_data": (POINTER(ctypes.c_float), [c_void_p]),
        "al_model_run": (c_int, [c_void_p, POINTER(NamedTensor), c_size_t, POINTER(RunOpts),
                                 POINTER(POINTER(NamedTensor)), POINTER(c_size_t), c_void_p]),
        "al_outputs_free": (None, [POINTER(NamedTensor), c_size_t]),
        # the commands run / verify (include/anelint.h "commands"): options, result, diags
        "al_run_model": (c_int, [POINTER(ExecOpts), POINTER(c_void_p), c_void_p]),
        "al_verify": (c_int, [POINTER(ExecOpts), POINTER(c_void_p), c_void_p]),
        "al_exec_result_values": (POINTER(NamedTensor), [c_void_p, POINTER(c_size_t)]),
        "al_exec_result_json": (None, [c_void_p, c_void_p]),
        "al_exec_result_free": (None, [c_void_p]),
        "al_prove_equivalent": (c_int, [c_void_p, c_void_p, POINTER(ProofOpts), POINTER(Proof), c_void_p]),
        "al_proof_clear": (None, [POINTER(Proof)]),
        "al_surgery_plan": (c_int, [c_void_p, POINTER(SurgeryOpts), POINTER(c_void_p), c_void_p]),
        "al_surgery_count": (c_size_t, [c_void_p]),
        "al_surgery_get": (POINTER(Rewrite), [c_void_p, c_size_t]),
        "al_surgery_applied": (c_size_t, [c_void_p]),
        "al_surgery_write": (c_int, [c_void_p, c_char_p, c_void_p]),
        "al_surgery_free": (None, [c_void_p]),
        # the configuration and the baseline (include/anelint.h "CI")
        "al_ci_open": (c_int, [POINTER(CiOpts), POINTER(c_void_p)]),
        "al_ci_free": (None, [c_void_p]),
        "al_ci_messages": (c_char_p, [c_void_p]),
        "al_ci_baseline_begin": (c_void_p, [c_void_p, c_char_p]),
        "al_ci_baseline_add": (None, [c_void_p, c_void_p]),
        "al_ci_baseline_json": (c_char_p, [c_void_p]),
        "al_ci_baseline_end": (c_int, [c_void_p, c_bool]),
        # the output guard (include/anelint.h): out, the inputs, their count, AL_OUTPUT_* flags, diags
        "al_output_check": (c_int, [c_char_p, POINTER(c_char_p), c_size_t, ctypes.c_uint, c_void_p]),
        # fix as one call: options, result, diags; its JSON report; the result freed
        "al_model_fix": (c_int, [POINTER(FixOpts), POINTER(FixResult), c_void_p]),
        "al_fix_write_json": (None, [c_void_p, POINTER(FixResult)]),
        "al_fix_result_free": (None, [POINTER(FixResult)]),
        # compare as one call: options, result, diags; an evidence format by name
        "al_compare": (c_int, [POINTER(CompareOpts), POINTER(CompareResult), c_void_p]),
        "al_compare_result_free": (None, [POINTER(CompareResult)]),
        "al_evidence_format_find": (c_int, [c_char_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


def libc():
    c = ctypes.CDLL(None) if sys.platform != "win32" else None
    c.tmpfile.restype, c.tmpfile.argtypes = c_void_p, []
    c.fflush.argtypes = [c_void_p]
    c.fclose.argtypes = [c_void_p]
    c.fileno.argtypes = [c_void_p]
    return c
