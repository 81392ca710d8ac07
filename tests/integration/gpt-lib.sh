# gpt-lib.sh: shared by the gpt tests, after lib.sh.  gpt_text FILE BYTES:
# English text from Debian's fortunes (bootstrap installs it).
# gpt_job FILE NAME TEXT RANKS EXTRA-TRAIN [EXTRA-TOP]: a small gpt job.
gpt_text() {
	[ -f /usr/share/games/fortunes/fortunes ] ||
		fail "fortunes is not installed (bootstrap installs it)"
	head -c "$2" /usr/share/games/fortunes/fortunes > "$1"
}

gpt_job() {
	cat > "$1" <<YEOF
name: $2
resources: {ranks: $4, placement: spread}
model: {type: gpt, layers: 2, heads: 2, channels: 32, context: 16}
data: {path: $3}
train:
  epochs: 1
  seed: 11
  lr: {base: 0.003, schedule: cosine, warmup_steps: 10}
  batch: {global: 8, micro: 2}
$5
compression: {method: none}
checkpoint: {every_steps: 0, keep: 2}
${6:-}
YEOF
}
