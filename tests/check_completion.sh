#!/bin/sh
# Usage: check_completion.sh FTPLAN SHELL
# Writes `FTPLAN completion SHELL` to a file and has SHELL check its syntax (-n); for bash it also
# loads the script and completes a few words. Exit 77 (skipped) when SHELL is not installed.
ftplan=$1
shell=$2
if ! command -v "$shell" >/dev/null 2>&1; then
  echo "$shell is not installed: the $shell completion script is not checked"
  exit 77
fi
script=$(mktemp) || exit 1
trap 'rm -f "$script"' EXIT
"$ftplan" completion "$shell" >"$script" || { echo "ftplan completion $shell failed"; exit 1; }
"$shell" -n "$script" || { echo "$shell -n rejects the script"; exit 1; }
echo "$shell -n accepts the script"
if [ "$shell" = zsh ]; then
  # Loaded after compinit, the script registers its function for ftplan.
  zsh -f -c 'autoload -U compinit && compinit -u -D && . "$1" && [[ ${_comps[ftplan]} == _bash_complete* ]]' \
    zsh "$script" || { echo "zsh: the script registers no completion for ftplan"; exit 1; }
  echo "zsh registers the completion"
  exit 0
fi
if [ "$shell" = fish ]; then
  # fish completes a command line given with -C from the loaded script.
  got=$(fish --no-config -c 'source $argv[1]; complete -C "ftplan fit --micro-b"' "$script")
  case "$got" in
    --micro-batch*) ;;
    *) echo "fish completes 'ftplan fit --micro-b' to '$got'"; exit 1 ;;
  esac
  got=$(fish --no-config -c 'source $argv[1]; complete -C "ftplan compl"' "$script")
  case "$got" in
    completion*) ;;
    *) echo "fish completes 'ftplan compl' to '$got'"; exit 1 ;;
  esac
  got=$(fish --no-config -c 'source $argv[1]; complete -C "ftplan help expl"' "$script")
  case "$got" in
    explain*) ;;
    *) echo "fish completes 'ftplan help expl' to '$got'"; exit 1 ;;
  esac
  echo "fish completes commands and options"
  exit 0
fi
# check WANT WORDS...: bash completes the last of WORDS to WANT (the words offered, in order).
check() {
  want=$1
  shift
  got=$(bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ftplan_complete; echo "${COMPREPLY[*]}"' complete "$script" "$@")
  if [ "$got" != "$want" ]; then
    echo "completing '$*': got '$got', expected '$want'"
    exit 1
  fi
}
check "--micro-batch" ftplan fit --micro-b
check "h200-nvl" ftplan fit --gpu h200-n
check "completion" ftplan compl
check "import" ftplan calibrate imp
check "explain" ftplan help expl
check "fish" ftplan completion fi
check "--network-GBps --network-gbps" ftplan scale --network-
echo "bash completes commands, options and card ids"
