# The CLI tests' checks: expect CODE DESCRIPTION -- command... (the exit code), expect_out PATTERN DESCRIPTION --
# command... (a line of the output matches); each counts into pass and fail. Sourced by cli_test.sh and cli_ticks_test.sh.
pass=0 fail=0
expect() { # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2; shift 3
  local out; out=$("$@" 2>&1); local got=$?
  if [ "$got" -eq "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what: exit $got, want $want"; echo "$out" | head -5; fi
}
expect_out() { # expect_out PATTERN DESCRIPTION -- command...
  local pat=$1 what=$2; shift 3
  if "$@" 2>&1 | grep -q -- "$pat"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what: no '$pat' in output"; fi
}
