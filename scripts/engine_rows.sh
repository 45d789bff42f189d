#!/bin/bash
# The rows of the vLLM 0.34 table (docs/measurements/2026-12-03-every-engine-qwen3-coder-deepseek-v32.md): one `callscale gate --meter instructions` per engine class and
# workload, beside our parser of the same format (its reference row), on the model's tokens.
#
# usage: scripts/engine_rows.sh OUTDIR [WORKLOAD ...]
#   run inside the virtualenv that holds the engine (docs/engines.md, "Installing an engine's parsers");
#   WORKLOAD defaults to write_file many_short_calls repeated_opener; the content kinds and deliveries
#   are workload names too (write_file@mixed write_file@mixed+parts:16 write_file@cjk write_file+char ...).
#   ENGINE_ROWS_LENGTHS (default 2k,4k,8k), ENGINE_ROWS_TIMEOUT (seconds a case, default 2400) and
#   ENGINE_ROWS_ONLY (a format: run that format's classes only) change the run.
# Each run writes OUTDIR/FORMAT/WORKLOAD.txt (the gate's table) and OUTDIR/FORMAT/WORKLOAD/scaling.csv.
set -u
out=${1:?usage: scripts/engine_rows.sh OUTDIR [WORKLOAD ...]}
shift
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(write_file many_short_calls repeated_opener)
lengths=${ENGINE_ROWS_LENGTHS:-2k,4k,8k}
timeout=${ENGINE_ROWS_TIMEOUT:-2400}
only=${ENGINE_ROWS_ONLY:-}
while read -r cls fmt; do
  [ -n "$only" ] && [ "$only" != "$fmt" ] && continue
  mkdir -p "$out/$fmt"
  for wl in "${workloads[@]}"; do
    name=${wl//[:+@]/_}
    nice -n 10 callscale gate --meter instructions --chunking model --cost-only --lengths "$lengths" \
      --timeout "$timeout" --workload "$wl" --parser "$cls" --parser "$fmt" --workload-format "$fmt" \
      --no-progress --out "$out/$fmt/$name" > "$out/$fmt/$name.txt" 2>&1
    echo "$fmt $wl exit $?"
  done
done <<LIST
vllm.tool_parsers.deepseekv32_engine_tool_parser:DeepSeekV32EngineToolParser deepseek_v32
vllm.tool_parsers.qwen3_engine_tool_parser:Qwen3EngineToolParser qwen3_coder
vllm.tool_parsers.hermes_tool_parser:Hermes2ProToolParser qwen3
vllm.parser.harmony:HarmonyParser gpt_oss
vllm.tool_parsers.deepseekv3_tool_parser:DeepSeekV3ToolParser deepseek_v3
vllm.tool_parsers.kimi_k2_tool_parser:KimiK2ToolParser kimi_k2
vllm.tool_parsers.gemma4_engine_tool_parser:Gemma4EngineToolParser gemma4
vllm.tool_parsers.minimax_m2_tool_parser:MinimaxM2ToolParser minimax_m2
vllm.tool_parsers.glm47_moe_tool_parser:Glm47MoeModelToolParser glm47
vllm.tool_parsers.mistral_tool_parser:MistralToolParser mistral
vllm.tool_parsers.minimax_m3_tool_parser:MinimaxM3ToolParser minimax_m3
vllm.tool_parsers.llama_json_engine_tool_parser:LlamaJsonEngineToolParser llama3_json
LIST
