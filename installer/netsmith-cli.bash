# bash completion for netsmith-cli
_netsmith_cli() {
  local cur prev words cword
  _init_completion || return
  local commands="validate summary env ops transforms formats data-stats init make-dataset preview-aug lr-schedule bench train eval predict doctor lr-find export import sweep"
  if [[ $cword -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
    return
  fi
  case "$prev" in
    --out | --onnx | --safetensors | --pytorch | --resume | --init-from | --data | --checkpoint | \
      --weights | --gradcam | --embedding | --predictions | --profile | --source | --apply-best)
      _filedir
      return ;;
    --device)
      COMPREPLY=($(compgen -W "cpu cuda cuda:0 cuda:1" -- "$cur"))
      return ;;
    --split)
      COMPREPLY=($(compgen -W "test validation train" -- "$cur"))
      return ;;
  esac
  local opts=""
  case "${words[1]}" in
    validate) opts="" ;;
    summary) opts="--batch-size --json" ;;
    env) opts="--json --threads" ;;
    ops | transforms | formats) opts="--json" ;;
    data-stats) opts="--json --sizes" ;;
    init) opts="--out --task --template --name --channels --height --width --validation --explicit-normalization --dry-run --force" ;;
    make-dataset) opts="--out --seed --train --test --source" ;;
    preview-aug) opts="--out --samples --draws --seed" ;;
    lr-schedule) opts="--json --epochs --batch-size --lr --nproc --limit-train --steps-per-epoch --seed" ;;
    bench) opts="--steps --batch-size --threads --profile --runs --seconds --json" ;;
    train) opts="--epochs --batch-size --lr --device --threads --seed --limit-train --limit-val --limit-test --out --resume --init-from --max-batches --stop-at-epoch --no-test --nproc --dist-timeout --deploy-bench --json" ;;
    eval) opts="--data --split --limit --batch-size --threads --top-k --json --data-from-checkpoint --gradcam --gradcam-node --gradcam-class --out --temperature --fit-temperature --predictions --embedding --tta --onnx" ;;
    predict) opts="--out --batch-size --threads --json" ;;
    lr-find) opts="--start --end --steps --limit-train --threads --batch-size --json" ;;
    export) opts="--onnx --opset --softmax --decoder --nms --temperature --safetensors --pytorch --samples --keep-failed --int8 --calibration --data-from-checkpoint --json" ;;
    sweep) opts="--parallel --threads --out --limit-train --limit-val --resume --apply-best --force --json" ;;
    doctor) opts="--out --folds --epochs --limit --checkpoint --no-labels --seed --json --schema" ;;
    import) opts="--out --weights --input --classes --replace-head --freeze-to --lr-mult --force --json" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    case "${words[1]}" in
      eval | export) _filedir safetensors ;;
      predict) _filedir ;;
      import) _filedir onnx ;;
      bench) _filedir '@(json|onnx)' ;;
      *) _filedir json ;;
    esac
  fi
}
complete -F _netsmith_cli netsmith-cli
