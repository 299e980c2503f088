package redact

import (
	"path/filepath"
	"regexp"
	"strings"
)

// The argv rules. A flag is secret-looking when its name, lowercased with
// leading dashes dropped and '_' read as '-', is not a negation ("no-…")
// and either
//
//   - ends in one of the words token, secret, password, passwd, passphrase,
//     pass, apikey, auth, authorization, bearer, credential, credentials,
//     cookie, pat (so --token, --access-token, --github-token, --secret,
//     --client-secret, --password, --db-password, --passwd, --apikey,
//     --auth, --basic-auth, --credentials, …), or
//   - ends in the word key, alone or after api, access, secret, private,
//     auth, client, master, license, encryption, signing, session,
//     account, subscription (--key, --api-key, --secret-key,
//     --private-key, …; not --sort-key or --ssh-key).
//
// The same test decides NAME=VALUE arguments (GITHUB_TOKEN=…,
// OPENAI_API_KEY=…, AWS_SECRET_ACCESS_KEY=…; not AWS_ACCESS_KEY_ID).
//
// What is masked in an argv (the command is never masked):
//
//   - the value of a secret-looking flag: "--flag=VALUE", or the next
//     argument after "--flag" unless that looks like a flag itself
//     ("-x…" or "--…": mysql's --password with no value prompts);
//   - -p: the next argument, and for mysql-like commands (mysql,
//     mysqldump, mysqladmin, mariadb, …) also the attached form -pVALUE.
//     -p is not a password flag for commands where it means something
//     else: interpreters, where it evaluates or prints code given on the
//     command line (node, deno, bun, perl, ruby, python…, php; as -e and
//     -c, it is shown, since it is what runs), package runners and
//     managers (npx, npm, pnpm, yarn, bunx, uv, uvx, pip…: the package or
//     the Python version), docker and podman (published ports), ssh
//     (port), mkdir and cp;
//   - the value of --header/-H "Name: VALUE" (its name is kept; a
//     --header value without a colon is masked whole);
//   - NAME=VALUE arguments, alone or as a flag's value, with a
//     secret-looking NAME (docker's -e GITHUB_TOKEN=…);
//   - the userinfo and parameter values of every URL in an argument
//     (postgres://user:PASSWORD@host/db).
//
// Values that are references (${VAR}, file:PATH) are kept, as everywhere.

// secretLast are the last words of a secret-looking name.
var secretLast = map[string]bool{
	"token": true, "secret": true, "password": true, "passwd": true, "passphrase": true, "pass": true,
	"apikey": true, "auth": true, "authorization": true, "bearer": true,
	"credential": true, "credentials": true, "cookie": true, "pat": true,
}

// keyQualifiers are the words before "key" that make it a secret.
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "auth": true, "client": true,
	"master": true, "license": true, "encryption": true, "signing": true, "session": true,
	"account": true, "subscription": true,
}

// SecretName reports whether a flag or variable name looks like it holds a
// secret ("--api-key", "GITHUB_TOKEN", "client_secret"); see the rules
// above.
func SecretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	n = strings.ReplaceAll(n, "_", "-")
	if n == "" || strings.HasPrefix(n, "no-") {
		return false
	}
	words := strings.Split(n, "-")
	last := words[len(words)-1]
	if secretLast[last] {
		return true
	}
	if last == "key" {
		return len(words) == 1 || keyQualifiers[words[len(words)-2]]
	}
	return false
}

// pMeaning says what -p means for a command.
type pMeaning int

const (
	pPassword  pMeaning = iota // -p VALUE is a password (the default)
	pNotSecret                 // -p means something else (code, a package, a port)
	pMySQL                     // -p VALUE and -pVALUE are passwords
)

var (
	pCodeRE   = regexp.MustCompile(`^(node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|python[0-9.]*|pypy[0-9.]*|php[0-9.]*)$`)
	pOther    = map[string]bool{"npx": true, "npm": true, "pnpm": true, "pnpx": true, "yarn": true, "bunx": true, "uv": true, "uvx": true, "pip": true, "pip3": true, "pipx": true, "docker": true, "podman": true, "ssh": true, "mkdir": true, "cp": true}
	pMySQLSet = map[string]bool{"mysql": true, "mysqldump": true, "mysqladmin": true, "mysqlimport": true, "mysqlcheck": true, "mysqlshow": true, "mysqlsh": true, "mariadb": true, "mariadb-dump": true, "mariadb-admin": true}
)

// commandBase is a command's program name: its last path element,
// lowercased, without .exe or .cmd.
func commandBase(cmd string) string {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(cmd, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	return strings.TrimSuffix(base, ".cmd")
}

func pFor(cmd string) pMeaning {
	base := commandBase(cmd)
	switch {
	case pCodeRE.MatchString(base), pOther[base]:
		return pNotSecret
	case pMySQLSet[base]:
		return pMySQL
	}
	return pPassword
}

// looksLikeFlag reports whether a is a flag rather than a flag's value.
func looksLikeFlag(a string) bool {
	return strings.HasPrefix(a, "--") || len(a) > 1 && a[0] == '-' && isLetter(a[1])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

var argAssignRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$`)

// Argv masks argv (the command, then its arguments) by the rules above and
// returns a copy; argv itself is not changed.
func (m *Masker) Argv(argv []string) []string {
	out := append([]string(nil), argv...)
	if m.Reveal || len(argv) < 2 {
		return out
	}
	p := pFor(argv[0])
	for i := 1; i < len(out); i++ {
		a := argv[i]
		next := func(mask func(string) string) {
			if i+1 < len(argv) && !looksLikeFlag(argv[i+1]) {
				out[i+1] = mask(argv[i+1])
				i++
			}
		}
		if !looksLikeFlag(a) {
			out[i] = m.plainArg(a)
			continue
		}
		if name, v, ok := strings.Cut(a, "="); ok {
			switch {
			case SecretName(name), name == "-p" && p != pNotSecret:
				out[i] = name + "=" + m.Value(v)
			case isHeaderFlag(name):
				out[i] = name + "=" + m.header(v, true)
			default:
				out[i] = name + "=" + m.plainArg(v)
			}
			continue
		}
		switch {
		case a == "-p" && p != pNotSecret:
			next(m.Value)
		case p == pMySQL && strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "--"):
			out[i] = "-p" + m.Value(a[2:])
		case isHeaderFlag(a):
			whole := a == "--header"
			next(func(v string) string { return m.header(v, whole) })
		case SecretName(a):
			next(m.Value)
		}
	}
	return out
}

func isHeaderFlag(name string) bool { return name == "--header" || name == "-H" }

// header masks the value of "Name: value"; without a colon, the whole
// argument when whole is set.
func (m *Masker) header(v string, whole bool) string {
	name, val, ok := strings.Cut(v, ":")
	if !ok {
		if whole {
			return m.Value(v)
		}
		return v
	}
	lead := val[:len(val)-len(strings.TrimLeft(val, " \t"))]
	return name + ":" + lead + m.Value(val[len(lead):])
}

// plainArg masks what an argument that is not a flag may hold: a NAME=VALUE
// assignment with a secret-looking name, or URLs.
func (m *Masker) plainArg(a string) string {
	if sm := argAssignRE.FindStringSubmatch(a); sm != nil && SecretName(sm[1]) {
		return sm[1] + "=" + m.Value(sm[2])
	}
	if strings.Contains(a, "://") {
		return m.urls(a)
	}
	return a
}
