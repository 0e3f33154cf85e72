#!/bin/bash
# Runs every command for the instances listed in LIST (FILE NAME per line) of
# qa2's programs: session 22's driver (bench/exp/s22/qa3/run.sh, a superset of
# the one that made qa2's results: it also lowers TileLang modules and checks
# odd losses' backward passes).
Q=bench/exp/s21/qa2 exec bash bench/exp/s22/qa3/run.sh "$@"
