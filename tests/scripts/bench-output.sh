#!/usr/bin/env bash
# gas-bench's output formats are valid: --json parses and holds every row of
# the table, --csv has a header and 8 fields a row, --plot writes an SVG that
# parses as XML (xmllint when installed, else a structural check); --compare
# writes its table, per-collective plot and JSON rows, and with --csv only CSV
# rows after the header (comments before it, later notes on stderr); --json
# and --csv to stdout are refused while gasrun tags output lines; an
# unwritable output file is an output error, not a
# failed data check; empty lists and options where a value belongs are
# refused.  No timing assertion: the numbers of a --quick run mean nothing.
. "$(dirname "$0")/lib-tmp.sh"
run() { timeout 120 "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench" --quick --reps 2 "$@"; }

modes=put-lat,get-bw,putsig-lat,amo-lat,amo-rate,barrier
run --mode $modes --max-size 4k --json="$T/b.json" --plot "$T/b.svg" >"$T/table" 2>"$T/err" ||
    fail "table run: $(tail -3 "$T/err")"
rows=$(awk 'NF >= 8 && ($6 == "us" || $6 == "MB/s" || $6 == "Mops/s")' "$T/table" | wc -l)

# JSON: parses; as many rows as the table; every result row has a ratio
if command -v jq >/dev/null; then
    n=$(jq '.rows | length' "$T/b.json") || fail "--json does not parse"
    [ "$n" = "$rows" ] || fail "--json has $n rows, the table $rows"
    jq -e '[.rows[] | select(.reference == false) | has("ratio")] | all' "$T/b.json" >/dev/null ||
        fail "a result row without a ratio"
    jq -e '.nranks == 2 and .errors == 0' "$T/b.json" >/dev/null || fail "header fields"
elif command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["rows"])==int(sys.argv[2])' \
        "$T/b.json" "$rows" || fail "--json does not parse or lacks rows"
else
    grep -q '"rows": \[' "$T/b.json" || fail "--json has no rows"
fi
echo "ok: --json ($rows rows)"

# SVG: well-formed XML with both panels and a curve
if command -v xmllint >/dev/null; then
    xmllint --noout "$T/b.svg" || fail "--plot is not well-formed XML"
else
    head -2 "$T/b.svg" | grep -q '<svg ' && tail -1 "$T/b.svg" | grep -q '^</svg>$' ||
        fail "--plot is not an svg document"
fi
grep -q 'latency' "$T/b.svg" && grep -q 'bandwidth' "$T/b.svg" || fail "--plot lacks a panel"
grep -q '<polyline' "$T/b.svg" || fail "--plot has no curve"
echo "ok: --plot"

# CSV: the header, then 8 fields on every data line
run --mode put-lat,amo-rate --max-size 64 --csv >"$T/csv" 2>"$T/err" || fail "csv run: $(tail -3 "$T/err")"
grep -qx 'mode,size,median,p10,p90,unit,reference,ratio' "$T/csv" || fail "--csv header"
bad=$(grep -v '^#' "$T/csv" | awk -F, 'NF != 8' | head -1)
[ -z "$bad" ] || fail "--csv line with other than 8 fields: $bad"
# comments only before the header: later notes (the end's ping-pong, the data
# checks) go to stderr, so the rows after the header are data alone
bad=$(awk '/^mode,size,/ { h = 1; next } h && /^#/' "$T/csv" | head -1)
[ -z "$bad" ] || fail "--csv: a comment among the data rows: $bad"
grep -q 'data checks passed' "$T/err" || fail "--csv: the data checks line is not on stderr"
echo "ok: --csv"

# under gasrun's default tagging ("[r] " before every line) --json to stdout
# and --csv would not parse: refused (exit 2) naming the ways out, no run
for opt in --json --csv; do
    timeout 60 "$BUILD/bin/gasrun" -n 2 "$BUILD/bin/gas-bench" --quick --mode put-lat $opt \
        >"$T/tagged" 2>"$T/err"
    st=$?
    [ "$st" = 2 ] || fail "tagged $opt to stdout: exit status $st, expected 2"
    grep -qF -- "gas-bench: $opt to stdout would not parse: gasrun prefixes every output line with its rank" "$T/err" &&
        grep -qF -- "--no-tag-output" "$T/err" || fail "tagged $opt: $(head -2 "$T/err")"
    ! grep -q 'put-lat' "$T/tagged" || fail "tagged $opt: it ran anyway"
done
timeout 60 "$BUILD/bin/gasrun" -n 2 "$BUILD/bin/gas-bench" --quick --mode put-lat --max-size 8 \
    --json="$T/tagged.json" >/dev/null 2>"$T/err" || fail "tagged, --json=FILE: $(tail -2 "$T/err")"
echo "ok: --json and --csv to stdout refused under tagging; --json=FILE runs"

# --json on stdout: the JSON alone on stdout, the table on stderr
run --mode amo-lat --json >"$T/out.json" 2>"$T/err" || fail "--json run"
if command -v jq >/dev/null; then jq -e '.rows | length > 0' "$T/out.json" >/dev/null ||
    fail "--json to stdout does not parse"; fi
grep -q '^amo-fadd ' "$T/err" || fail "the table did not go to stderr"
echo "ok: --json to stdout"

# --compare: the table has a row per collective and size with its chosen/best
# ratio, the plot a panel per collective, the JSON a row per algorithm and size
timeout 120 "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench" --quick --reps 2 \
    --compare --coll barrier,allreduce,broadcast --md "$T/c.md" --plot "$T/c.svg" \
    --json="$T/c.json" >"$T/ctext" 2>"$T/err" || fail "--compare run: $(tail -3 "$T/err")"
grep -q '^worst case: ' "$T/ctext" || fail "--compare: no worst-case line"
pts=$(awk -F' *\\| *' '$2 ~ /^(barrier|allreduce|broadcast)$/ && $8 ~ /^(\*\*)?[0-9.]+x(, again [0-9.]+x)?(\*\*)?$/' "$T/c.md" | wc -l)
[ "$pts" = 15 ] || fail "--compare --md: $pts rows with a chosen/best ratio, want 15 (1 + 7 + 7)"
# a first-pass chosen/best over 1.10x is always measured again (", again R")
unconfirmed=$(awk -F' *\\| *' '$8 ~ /^(\*\*)?[0-9.]+x(\*\*)?$/ { v = $8; gsub(/[*x]/, "", v); if (v + 0 > 1.10) print }' "$T/c.md" | wc -l)
[ "$unconfirmed" = 0 ] || fail "--compare --md: $unconfirmed rows over 1.10x were not measured again"
# so is an auto row (the call through the tuning table) over 1.10x
unconfirmed=$(awk -F' *\\| *' '$9 ~ /^[0-9.]+x$/ { v = $9; gsub(/x/, "", v); if (v + 0 > 1.10) print }' "$T/c.md" | wc -l)
[ "$unconfirmed" = 0 ] || fail "--compare --md: $unconfirmed auto rows over 1.10x were not measured again"
if command -v xmllint >/dev/null; then
    xmllint --noout "$T/c.svg" || fail "--compare --plot is not well-formed XML"
fi
for c in allreduce broadcast; do grep -q ">$c</text>" "$T/c.svg" || fail "--compare --plot: no $c panel"; done
if command -v jq >/dev/null; then
    jq -e '[.rows[] | select(.group == "compare" and has("ratio"))] | length > 15' "$T/c.json" \
        >/dev/null || fail "--compare --json rows"
fi
echo "ok: --compare (--md, --plot, --json)"

# --compare --csv: the CSV header, then only CSV rows of 8 fields and '#' comments
run --compare --coll barrier,gather --csv >"$T/ccsv" 2>"$T/err" || fail "--compare --csv run: $(tail -3 "$T/err")"
grep -qx 'mode,size,median,p10,p90,unit,reference,ratio' "$T/ccsv" || fail "--compare --csv header"
bad=$(grep -v '^#' "$T/ccsv" | awk -F, 'NF != 8' | head -1)
[ -z "$bad" ] || fail "--compare --csv: a line neither a CSV row nor a comment: $bad"
bad=$(awk '/^mode,size,/ { h = 1; next } h && /^#/' "$T/ccsv" | head -1)
[ -z "$bad" ] || fail "--compare --csv: a comment among the data rows: $bad"
grep -q 'worst case: ' "$T/err" || fail "--compare --csv: the worst-case note is not on stderr"
n=$(grep -c '^gather:[a-z_]*,[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*,us,[0-9.]*,[0-9.]*$' "$T/ccsv")
[ "$n" -ge 21 ] || fail "--compare --csv: $n gather rows, want 3 algorithms x 7 sizes"
echo "ok: --compare --csv"

# an output file that cannot be written is found before the run: exit 2
# naming the option, file and cause, and nothing measured
for opt in --json=/nonexistent/x.json "--plot /nonexistent/x.svg" "--md /nonexistent/x.md"; do
    # shellcheck disable=SC2086
    run --mode amo-lat $opt >"$T/out" 2>"$T/err"
    st=$?
    o=${opt%%[= ]*} f=${opt#*[= ]}
    [ "$st" = 2 ] || fail "$opt: exit status $st, expected 2"
    grep -q -- "$o: cannot write $f: No such file or directory" "$T/err" ||
        fail "$opt: $(grep -v '^gasrun' "$T/err" | head -2)"
    ! grep -q 'amo-lat\|data checks' "$T/out" || fail "$opt: it measured before refusing"
done
echo "ok: unwritable output files are refused before the run"

# the JSON says what each ratio is: a multiple (latency) or a percentage
if command -v jq >/dev/null; then
    jq -e '[.rows[] | select(has("ratio")) | .ratio_unit == (if .kind == "latency" then "x" else "%" end)] | all' \
        "$T/b.json" >/dev/null || fail "--json: a ratio_unit that does not match its row's kind"
    echo "ok: --json ratio_unit"
fi

# gasrun tells a rank whether its own stderr is a terminal (the rank's is a
# pipe), which is what gas-bench's progress line goes by
if command -v script >/dev/null; then
    tty=$(script -qec "$BUILD/bin/gasrun -n 1 sh -c 'echo tty=\$GASRUN_STDERR_TTY'" /dev/null </dev/null | tr -d '\r')
    notty=$("$BUILD/bin/gasrun" -n 1 sh -c 'echo tty=$GASRUN_STDERR_TTY' 2>/dev/null)
    [ "$tty" = "tty=1" ] && [ "$notty" = "tty=0" ] ||
        fail "GASRUN_STDERR_TTY: '$tty' on a terminal, '$notty' on a file"
    echo "ok: GASRUN_STDERR_TTY"
fi

# an empty --mode, and an option where a file or list belongs, are refused
bin=$(cd "$BUILD/bin" && pwd)
(cd "$T" && timeout 60 "$bin/gasrun" -n 2 --no-tag-output "$bin/gas-bench" --tune --quick >"$T/bad" 2>&1)
st=$?
[ "$st" = 2 ] || fail "gas-bench --tune --quick: exit status $st, expected 2"
grep -qF -- "--tune needs a value, not the option '--quick'" "$T/bad" || fail "--tune --quick: $(head -2 "$T/bad")"
[ ! -e "$T/--quick" ] || fail "gas-bench --tune --quick wrote a file named --quick"
run --mode '' >"$T/bad" 2>&1
st=$?
[ "$st" = 2 ] || fail "gas-bench --mode '': exit status $st, expected 2"
grep -qF -- "unknown mode ''" "$T/bad" || fail "--mode '': $(head -2 "$T/bad")"
echo "ok: empty lists and options as values are refused"

# bad options: exit 2 with a message naming the bad value, and no run
for bad in "--mode nonesuch|unknown mode 'nonesuch'" \
           "--mode coll-lat --coll allreduce,nonesuch|unknown collective 'nonesuch'" \
           "--min-size 10 --max-size 1|--min-size is above --max-size" \
           "--mode put-lat,|unknown mode ''" \
           "--mode coll-lat --coll allreduce --plot --md|--plot needs a value, not the option '--md'"; do
    args=${bad%%|*} want=${bad#*|}
    # shellcheck disable=SC2086
    run $args >"$T/bad" 2>&1
    st=$?
    [ "$st" = 2 ] || fail "gas-bench $args: exit status $st, expected 2"
    grep -qF -- "$want" "$T/bad" || fail "gas-bench $args: no '$want' in $(head -2 "$T/bad")"
done
echo "ok: bad options are refused"
