# bash completion for netsmith-cli
_netsmith_cli() {
  local cur prev words cword
  _init_completion || return
  local commands="validate summary env ops transforms formats data-stats preview-aug lr-schedule bench train eval lr-find export import doctor"
  if [[ $cword -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
    return
  fi
  case "$prev" in
    --out | --onnx | --safetensors | --pytorch | --resume | --init-from | --data)
      _filedir
      return ;;
    --device)
      COMPREPLY=($(compgen -W "cpu cuda cuda:0 cuda:1" -- "$cur"))
      return ;;
    --split)
      COMPREPLY=($(compgen -W "test train" -- "$cur"))
      return ;;
  esac
  local opts=""
  case "${words[1]}" in
    validate) opts="" ;;
    summary) opts="--batch-size --json" ;;
    env) opts="--json --threads" ;;
    ops | transforms | formats) opts="--json" ;;
    data-stats) opts="--json --sizes" ;;
    preview-aug) opts="--out --samples --draws --seed" ;;
    lr-schedule) opts="--json --epochs --batch-size --lr --nproc --limit-train --steps-per-epoch" ;;
    bench) opts="--steps --batch-size --threads --json" ;;
    train) opts="--epochs --batch-size --lr --device --threads --seed --limit-train --limit-val --limit-test --out --resume --init-from --max-batches --nproc --dist-timeout --json" ;;
    eval) opts="--data --split --limit --batch-size --threads --top-k --json --temperature --fit-temperature --predictions --embedding --tta" ;;
    lr-find) opts="--start --end --steps --limit-train --threads --batch-size --json" ;;
    export) opts="--onnx --opset --softmax --temperature --safetensors --pytorch --samples --keep-failed --json" ;;
    doctor) opts="--out --folds --epochs --limit --checkpoint --no-labels --seed --json --schema" ;;
    import) opts="--out --weights --input --classes --replace-head --freeze-to --lr-mult --force --json" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    case "${words[1]}" in
      eval | export) _filedir safetensors ;;
      import) _filedir onnx ;;
      *) _filedir json ;;
    esac
  fi
}
complete -F _netsmith_cli netsmith-cli
