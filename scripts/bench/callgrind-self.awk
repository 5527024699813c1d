# Self cost (Ir) per function of a callgrind output file, for
# scripts/bench-emacs-toggle.sh --callgrind: "object<TAB>function<TAB>Ir" lines.
# The cost lines after a calls= line are the call's inclusive cost, not the caller's own.
function name(kind, s,   id, rest) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 2, RLENGTH - 2); rest = substr(s, RLENGTH + 1); sub(/^ /, "", rest)
		if (rest != "") names[kind, id] = rest
		return names[kind, id]
	}
	return s
}
/^ob=/ { ob = name("ob", substr($0, 4)); next }
/^fl=|^fi=|^fe=/ { next }
/^fn=/ { fn = name("fn", substr($0, 4)); cur = ob "\t" fn; next }
/^cob=/ { name("ob", substr($0, 5)); next }
/^cfn=/ { name("fn", substr($0, 5)); next }
/^cfi=|^cfl=/ { next }
/^calls=/ { skip = 1; next }
/^[0-9+*-]/ { if (skip) { skip = 0; next } self[cur] += $2; next }
END { for (k in self) if (self[k]) printf "%s\t%d\n", k, self[k] }
