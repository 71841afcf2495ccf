#!/bin/sh
# doclinks.sh [FILE.md ...]: checks that every relative link of the given
# Markdown files (default: README.md and docs/*.md) names a file or directory
# inside the repository, and that a #fragment names a heading of its Markdown
# file (GitHub's anchors: lower case, punctuation dropped, spaces as -).
# Links into fenced code blocks and http(s)/mailto links are not checked.
# Prints each broken link as FILE:LINE: TARGET; exit status 1 if any.
cd "$(dirname "$0")/.." || exit 2
root=$(pwd -P)
[ $# -gt 0 ] || set -- README.md docs/*.md

# anchors FILE: the heading anchors of a Markdown file, one a line.
anchors() {
	awk '/^```/ { fence = !fence; next }
	!fence && /^#+ / {
		h = tolower($0); sub(/^#+ +/, "", h)
		gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
		print h
	}' "$1"
}

bad=0
for f in "$@"; do
	# FILE LINE TARGET for every [text](target) outside code fences.
	links=$(awk '/^```/ { fence = !fence; next }
	!fence {
		s = $0
		while (match(s, /\]\([^) ]+\)/)) {
			print FILENAME, FNR, substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$f")
	[ -n "$links" ] || continue
	while read -r file line target; do
		case $target in http://* | https://* | mailto:*) continue ;; esac
		path=${target%%#*}
		frag=
		case $target in *'#'*) frag=${target#*#} ;; esac
		if [ -z "$path" ]; then
			dest=$file
		else
			dest=$(dirname "$file")/$path
		fi
		case $(realpath -m "$dest") in
		"$root" | "$root"/*) ;;
		*) echo "$file:$line: $target: outside the repository" && bad=1 && continue ;;
		esac
		if [ ! -e "$dest" ]; then
			echo "$file:$line: $target: no such file" && bad=1
			continue
		fi
		case $dest in *.md) ;; *) continue ;; esac
		if [ -n "$frag" ] && ! anchors "$dest" | grep -qx -- "$frag"; then
			echo "$file:$line: $target: no heading #$frag in $dest" && bad=1
		fi
	done <<LINKS
$links
LINKS
done
exit $bad
