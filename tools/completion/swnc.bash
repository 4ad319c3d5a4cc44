# Bash completion for swnc, swnc-data and swnc-sim. The options are read from each command's
# own --help when completing, so this file never falls behind them. Installed to
# share/bash-completion/completions (loaded on demand), or: source tools/completion/swnc.bash

_swnc_help_options() { # COMMAND: its long options, from its --help
  "$1" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

_swnc() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  case $cur in
    --emit=*) COMPREPLY=($(compgen -P --emit= -W "ir dot c llvm bc asm obj" -- "${cur#--emit=}")); return ;;
    --target=*) COMPREPLY=($(compgen -P --target= -W "host sw26010" -- "${cur#--target=}")); return ;;
    --backend=*) COMPREPLY=($(compgen -P --backend= -W "c llvm" -- "${cur#--backend=}")); return ;;
    --recompute=*) COMPREPLY=($(compgen -P --recompute= -W "kept chains none" -- "${cur#--recompute=}")); return ;;
    --conv=*)
      local plans
      plans=$("${COMP_WORDS[0]}" --help 2>/dev/null | sed -n '/--conv=MODE/,/--tune=FILE/p' |
        awk 'NR > 5 && $1 ~ /^[a-z0-9]+$/ { print $1 }')
      COMPREPLY=($(compgen -P --conv= -W "auto swcaffe $plans" -- "${cur#--conv=}")); return ;;
    --print-after=*)
      COMPREPLY=($(compgen -P --print-after= -W "$("${COMP_WORDS[0]}" --passes 2>/dev/null | awk '{ print $1 }')" \
        -- "${cur#--print-after=}")); return ;;
    --*)
      local opts
      opts=$(_swnc_help_options "${COMP_WORDS[0]}" | sed 's/$/=/')
      COMPREPLY=($(compgen -W "$opts" -- "$cur"))
      compopt -o nospace 2>/dev/null
      return ;;
  esac
  if [ "$COMP_CWORD" -eq 1 ] && [[ $cur != -* ]]; then
    COMPREPLY=($(compgen -W "run tune import-caffe export-caffe" -- "$cur"))
  fi
  COMPREPLY+=($(compgen -f -X '!*.@(swn|prototxt)' -- "$cur") $(compgen -d -- "$cur"))
}

_swnc_tool() { # swnc-data, swnc-sim
  local cur=${COMP_WORDS[COMP_CWORD]}
  COMPREPLY=()
  if [[ $cur == --* ]]; then
    COMPREPLY=($(compgen -W "$(_swnc_help_options "${COMP_WORDS[0]}")" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 1 ] && [ "${COMP_WORDS[0]##*/}" = swnc-data ]; then
    COMPREPLY=($(compgen -W "pack info verify" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}

shopt -s extglob
complete -F _swnc swnc
complete -F _swnc_tool swnc-data swnc-sim
