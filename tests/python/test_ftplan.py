"""The Python module against the CLI: the same dicts as `ftplan ... --json`, errors as UserError.

Run by ctest (tests/python/run_pytest.sh): PYTHONPATH holds the built module, FTPLAN_BINARY the
CLI to compare with.
"""
import json
import os
import subprocess

import pytest

import ftplan

FTPLAN = os.environ.get("FTPLAN_BINARY", "ftplan")


def cli_json(*args):
    done = subprocess.run([FTPLAN, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_fit_is_the_cli_json():
    got = ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl")
    assert got["verdict"] == "fits"
    assert got == cli_json("fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                           "h200-nvl")


def test_matrix_is_the_cli_json_and_refuses_a_card():
    got = ftplan.matrix(model="llama-3.1-8b", method="qlora", nvlink=True, tokens=1e8,
                        price_per_card_hour=["h100-sxm=2.5"], sort="time")
    assert got == cli_json("matrix", "--model", "llama-3.1-8b", "--method", "qlora", "--nvlink",
                           "--tokens", "1e8", "--price-per-card-hour", "h100-sxm=2.5", "--sort",
                           "time")
    assert all(row["link"] != "none" for row in got["rows"])
    with pytest.raises(ftplan.UserError) as e:
        ftplan.matrix(model="llama-3.1-8b", method="qlora", gpu="l4")
    assert "leave out 'gpu'" in str(e.value)


def test_numbers_and_flags_pass_as_json():
    got = ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl", micro_batch=4, seq=4096,
                     chunked_loss=True)
    want = cli_json("fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                    "--micro-batch", "4", "--seq", "4096", "--chunked-loss")
    assert got == want
    assert got["micro_batch"] == 4
    assert got != ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl")


def test_misspelled_model_is_a_user_error_with_suggestions():
    with pytest.raises(ftplan.UserError) as caught:
        ftplan.fit(model="llama-3.1-8bb", method="lora", gpu="h200-nvl")
    e = caught.value
    assert isinstance(e, ValueError)
    assert e.code == "unknown_name"
    assert e.field == "model"
    assert "llama-3.1-8b" in e.suggestions
    assert "llama-3.1-8bb" in str(e)
    assert e.status == 400


def test_unknown_key_names_the_closest():
    with pytest.raises(ftplan.UserError) as caught:
        ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl", micro_btch=2)
    assert caught.value.code == "unknown_name"
    assert caught.value.field == "micro_btch"
    assert "micro_batch" in caught.value.suggestions


def test_a_list_for_a_single_value_is_refused():
    with pytest.raises(ftplan.UserError) as caught:
        ftplan.fit(model=["llama-3.1-8b", "qwen3-32b"], method="lora", gpu="h200-nvl")
    assert caught.value.field == "model"
    assert "takes one value" in str(caught.value)


def test_scale_returns_the_cli_dict():
    args = dict(model="llama-3.1-8b", method="lora", gpu="h200-nvl", gpus=4)
    got = ftplan.scale(**args)
    assert got["gpus"] == 4
    assert got["tokens_per_second"] > 0
    assert got == cli_json("scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                           "h200-nvl", "--gpus", "4")


def test_plan_takes_a_runs_document_as_keywords_or_text():
    document = {
        "candidates": {"gpus": ["h200-nvl", "rtx-pro-6000"], "counts": [1, 2]},
        "defaults": {"seq": 2048, "global_batch": 64, "tokens": 100e6},
        "runs": [{"name": "8B LoRA", "model": "llama-3.1-8b", "method": "lora", "rank": 16}],
    }
    got = ftplan.plan(**document)
    assert got["schema"] == "plan"
    assert [r["model"] for r in got["runs"]] == ["llama-3.1-8b"]
    assert got["runs"][0]["recommendation"]["gpu"] in ("h200-nvl", "rtx-pro-6000")
    assert ftplan.plan(document) == got
    assert ftplan.plan(json.dumps(document)) == got


def test_report_of_runs_text_is_the_cli_report_of_that_file():
    runs = ("candidates: {gpus: [h200-nvl], counts: [1]}\n"
            "runs:\n  - {name: tiny gemma, model: gemma-3-4b, method: lora, tokens: 1e7}\n")
    got = ftplan.report(runs, format="md", lang="de")
    done = subprocess.run([FTPLAN, "report", "-", "--format", "md", "--lang", "de"], input=runs,
                          capture_output=True, text=True, check=True)
    # The same report; where the command line names its file, the API names the request body.
    assert got == done.stdout.replace("`standard input`", "`the request body`")
    assert "tiny gemma" in got
    with pytest.raises(ftplan.UserError) as bad:
        ftplan.report(runs, formt="md")
    assert bad.value.field == "formt" and bad.value.suggestions == ["format"]


def test_catalog_functions():
    assert "llama-3.1-8b" in json.dumps(ftplan.models())
    assert "h200-nvl" in json.dumps(ftplan.gpus())
    assert ftplan.models()["schema"] == "models"


def test_every_endpoint_is_a_function():
    for name in ("fit", "step", "scale", "max", "mig", "params", "plan", "explain", "models",
                 "gpus", "words", "report", "matrix"):
        assert callable(getattr(ftplan, name)), name
    assert "micro_batch" in ftplan.fit.__doc__


def test_a_positional_dict_or_json_text_is_the_body():
    want = ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl")
    assert ftplan.fit({"model": "llama-3.1-8b", "method": "lora"}, gpu="h200-nvl") == want
    assert ftplan.fit('{"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl"}') == want


def test_positional_arguments_are_checked():
    with pytest.raises(TypeError):
        ftplan.fit(1)
    with pytest.raises(TypeError):
        ftplan.fit({"model": "llama-3.1-8b"}, {"method": "lora"})


def test_work_budget():
    document = {"candidates": {"gpus": ["h200-nvl", "rtx-pro-6000"], "counts": [1, 2, 4, 8]},
                "defaults": {"global_batch": 64, "tokens": 100e6},
                "runs": [{"name": "8B LoRA", "model": "llama-3.1-8b", "method": "lora"}]}
    ftplan.set_work_budget(evaluations=1)
    try:
        with pytest.raises(ftplan.UserError) as caught:
            ftplan.plan(**document)
        assert caught.value.code == "over_budget"
        assert caught.value.field == "evaluations"
        assert caught.value.status == 422
    finally:
        ftplan.set_work_budget()
    assert ftplan.plan(**document)["runs"]


def test_sweep_over_cards_into_a_table():
    # The README's example: one model and method on several cards, a row per card.
    rows = []
    for gpu in ["h200-nvl", "rtx-pro-6000", "rtx-4090"]:
        r = ftplan.fit(model="llama-3.1-8b", method="lora", gpu=gpu)
        rows.append(f"{gpu:14} {r['verdict']:13} {r['memory_GB']['free']:8.2f}")
    cells = [row.split() for row in rows]
    assert [c[0] for c in cells] == ["h200-nvl", "rtx-pro-6000", "rtx-4090"]
    assert [c[1] for c in cells] == ["fits", "fits", "fits"]
    free = [float(c[2]) for c in cells]
    assert free[0] > free[1] > free[2] > 0  # 141 GB, 96 GB, 24 GB cards
    assert rows[1] == "rtx-pro-6000   fits             85.91"  # the README's fit figure


def test_preference_objectives_and_generation():
    got = ftplan.fit(model="llama-3.1-8b", method="dpo", adapter="lora", gpu="h200-nvl")
    assert got == cli_json("fit", "--model", "llama-3.1-8b", "--method", "dpo", "--adapter",
                           "lora", "--gpu", "h200-nvl")
    assert got["reference"] == "adapters off"
    with pytest.raises(ftplan.UserError) as caught:
        ftplan.fit(model="llama-3.1-8b", method="lora", adapter="qlora", gpu="h200-nvl")
    assert caught.value.field == "adapter"
    infer = ftplan.infer(model="llama-3.1-8b", gpu="h200-nvl", context=8192, batch=32)
    assert infer["kv_bytes_per_token"] == 131072
    assert infer == cli_json("infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--context",
                             "8192", "--batch", "32")
