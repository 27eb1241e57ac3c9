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
  # Sourced after compinit, the script registers _ftplan for ftplan; saved as _ftplan in a folder
  # of fpath, compinit finds it there (#compdef) and the function loads from the file.
  zsh -f -c 'autoload -U compinit && compinit -u -D && . "$1" && [[ ${_comps[ftplan]} == _ftplan ]] && (( $+functions[_ftplan] ))' \
    zsh "$script" || { echo "zsh: the sourced script registers no completion for ftplan"; exit 1; }
  dir=$(mktemp -d) || exit 1
  cp "$script" "$dir/_ftplan"
  zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit && compinit -u -D && [[ ${_comps[ftplan]} == _ftplan ]] && autoload +X _ftplan && [[ $functions[_ftplan] == *_arguments* ]]' \
    zsh "$dir" || { rm -rf "$dir"; echo "zsh: _ftplan in fpath is not loaded for ftplan"; exit 1; }
  # An interactive zsh (on a pseudo-terminal) completes an option and a card id with it.
  zsh -f -c '
    if ! zmodload zsh/zpty 2>/dev/null || ! zpty z "zsh -f -i" 2>/dev/null; then
      print "zsh: no pseudo-terminal here: completing on a terminal is not checked"
      exit 0
    fi
    zpty -w z "PS1=\">\"; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; ftplan() {}"
    expect() {  # reads the terminal until it shows $1 (10 s at most)
      local seen= chunk
      for i in {1..100}; do
        zpty -r -t z chunk && seen+=$chunk
        [[ $seen == *"$1"* ]] && return 0
        sleep 0.1
      done
      print -r -- "zsh completed to: ${seen[-300,-1]}"
      return 1
    }
    zpty -w -n z "ftplan fit --micro-b"$'"'"'\t'"'"'
    expect "ftplan fit --micro-batch" || exit 1
    zpty -w -n z $'"'"'\C-u'"'"'"ftplan fit --gpu h200-n"$'"'"'\t'"'"'
    expect "h200-nvl" || exit 1
    zpty -d z' zsh "$dir" || { rm -rf "$dir"; echo "zsh: completing on a terminal failed"; exit 1; }
  rm -rf "$dir"
  echo "zsh registers the completion, sourced and from fpath, and completes options and cards"
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
