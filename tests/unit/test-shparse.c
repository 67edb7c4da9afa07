/* test-shparse.c — the shell parser: a table of command lines with the tree,
 * the commands the visitor reports, or the error with its column; then
 * offsets, word parts and flags, visitor contexts, the no-shell chain and
 * word expansion. */
#include "harness.h"
#include "shdump.h"
#include "ward/shparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P WARD_SH_POSIX

struct row {
	const char *src;
	unsigned flags;
	const char *tree; /* NULL: not checked */
	const char *cmds; /* NULL: not checked */
	const char *err;  /* the whole message, or NULL for success */
};

static const struct row rows[] = {
	/* words and blanks */
	{ "echo hello world", 0, "echo hello world", "echo hello world", NULL },
	{ "  echo\t hello  \t world  ", 0, "echo hello world", NULL, NULL },
	{ "echo", 0, "echo", "echo", NULL },
	{ "", 0, "", "", NULL },
	{ "   \n\n  ", 0, "", "", NULL },
	{ "/bin/rm -rf x", 0, "/bin/rm -rf x", NULL, NULL },
	/* single quotes */
	{ "echo 'a b'", 0, "echo <a b>", NULL, NULL },
	{ "echo ''", 0, "echo <>", NULL, NULL },
	{ "r''m -rf x", 0, "rm -rf x", "rm -rf x", NULL },
	{ "echo 'a\"b'", 0, "echo a\"b", NULL, NULL },
	{ "echo 'a\\nb'", 0, "echo a\\nb", NULL, NULL },
	{ "echo 'it'\\''s'", 0, "echo it's", NULL, NULL },
	{ "echo '$HOME `id` $(id)'", 0, "echo <$HOME `id` $(id)>", "echo <$HOME `id` $(id)>", NULL },
	{ "echo 'a\nb'", 0, "echo <a\nb>", NULL, NULL },
	/* double quotes */
	{ "echo \"a b\"", 0, "echo <a b>", NULL, NULL },
	{ "echo \"\"", 0, "echo <>", NULL, NULL },
	{ "echo \"a\\\"b\"", 0, "echo a\"b", NULL, NULL },
	{ "echo \"a\\$b\"", 0, "echo a$b", NULL, NULL },
	{ "echo \"a\\\\b\"", 0, "echo a\\b", NULL, NULL },
	{ "echo \"a\\nb\"", 0, "echo a\\nb", NULL, NULL },
	{ "echo \"a\\`b\"", 0, "echo a`b", NULL, NULL },
	{ "echo \"x'y\"", 0, "echo x'y", NULL, NULL },
	{ "echo \"a\\\nb\"", 0, "echo ab", NULL, NULL },
	{ "c\"ur\"l x", 0, "curl x", "curl x", NULL },
	/* backslashes */
	{ "\\rm -rf x", 0, "rm -rf x", "rm -rf x", NULL },
	{ "echo a\\ b", 0, "echo <a b>", NULL, NULL },
	{ "echo \\'", 0, "echo '", NULL, NULL },
	{ "echo \\\\", 0, "echo \\", NULL, NULL },
	{ "echo \\$HOME", 0, "echo $HOME", NULL, NULL },
	{ "echo a\\\nb", 0, "echo ab", NULL, NULL },
	{ "echo a \\\n b", 0, "echo a b", NULL, NULL },
	{ "ec\\\nho x", 0, "echo x", "echo x", NULL },
	{ "echo a\\", 0, "echo a\\", NULL, NULL },
	{ "echo \\;", 0, "echo ;", NULL, NULL },
	{ "echo \\|x", 0, "echo |x", NULL, NULL },
	/* $'…' (bash) and dash's reading of it */
	{ "echo $'a\\tb'", 0, "echo <a\tb>", NULL, NULL },
	{ "$'\\x72\\x6d' -rf x", 0, "rm -rf x", "rm -rf x", NULL },
	{ "echo $'\\101\\102'", 0, "echo AB", NULL, NULL },
	{ "echo $'it\\'s'", 0, "echo it's", NULL, NULL },
	{ "echo $'\\u00e9'", 0, "echo \xc3\xa9", NULL, NULL },
	{ "echo $'\\cA'", 0, "echo \x01", NULL, NULL },
	{ "echo $'\\q'", 0, "echo \\q", NULL, NULL },
	{ "echo $'a\\nb'", 0, "echo <a\nb>", NULL, NULL },
	{ "echo $'\\x72m'", P, "echo $\\x72m", NULL, NULL },
	{ "echo $\"a b\"", 0, "echo <a b>", NULL, NULL },
	{ "echo $\"a b\"", P, "echo <$a b>", NULL, NULL },
	/* expansions */
	{ "echo $HOME", 0, "echo $HOME", NULL, NULL },
	{ "echo ${HOME}/x", 0, "echo ${HOME}/x", NULL, NULL },
	{ "echo \"$HOME/.ssh\"", 0, "echo $HOME/.ssh", NULL, NULL },
	{ "echo $1 $@ $# $? $$ $! $- $0 $*", 0, "echo $1 $@ $# $? $$ $! $- $0 $*", NULL, NULL },
	{ "echo $", 0, "echo $", NULL, NULL },
	{ "echo a$", 0, "echo a$", NULL, NULL },
	{ "echo $%", 0, "echo $%", NULL, NULL },
	{ "echo ${x:-default value}", 0, "echo <${x:-default value}>", NULL, NULL },
	{ "echo ${x#*/} ${x%%.*} ${#x}", 0, "echo ${x#*/} ${x%%.*} ${#x}", NULL, NULL },
	{ "echo ${x:-$(id)}", 0, NULL, "id / echo ${x:-$(id)}", NULL },
	{ "echo \"${x:-`id`}\"", 0, NULL, "id / echo ${x:-`id`}", NULL },
	{ "echo ${x/a/b}", 0, "echo ${x/a/b}", NULL, NULL },
	{ "echo ${x/a/b}", P, NULL, NULL, "bad substitution at 6" },
	{ "echo ${!x}", 0, NULL, NULL, "indirect expansion is not supported at 6" },
	{ "echo ${x@P}", 0, NULL, NULL, "parameter transformation '@P' is not supported at 6" },
	{ "echo ${a[1]} ${a[@]} ${#a[@]} ${!a[@]} ${!pre*} ${a[@]:1:2} ${x@Q}", 0,
	  "echo ${a[1]} ${a[@]} ${#a[@]} ${!a[@]} ${!pre*} ${a[@]:1:2} ${x@Q}", NULL, NULL },
	{ "echo ${a[$(id)]} \"${m[$(uname) x]}\"", 0, NULL, "id / uname / echo ${a[$(id)]} <${m[$(uname) x]}>", NULL },
	{ "echo ${a['$(id)']}", 0, NULL, NULL, "single quote in an array subscript is not supported at 10" },
	{ "echo ${a[1]}", P, NULL, NULL, "bad substitution at 6" },
	{ "echo ${}", 0, NULL, NULL, "bad substitution at 6" },
	{ "echo ${x", 0, NULL, NULL, "unterminated parameter expansion at 6" },
	{ "echo ${x:-abc", 0, NULL, NULL, "unterminated parameter expansion at 6" },
	{ "echo $((1 + 2))", 0, "echo <$((1 + 2))>", NULL, NULL },
	{ "echo $(( (1+2) * $(cat n) ))", 0, NULL, "cat n / echo <$(( (1+2) * $(cat n) ))>", NULL },
	{ "echo $((1 + 2)", 0, NULL, NULL, "unterminated command substitution at 6" },
	{ "echo $((ls) )", 0, NULL, "ls / echo <$((ls) )>", NULL },
	/* globs and tilde */
	{ "ls *.c", 0, "ls *.c", NULL, NULL },
	{ "ls '*.c' \"*.h\"", 0, "ls *.c *.h", NULL, NULL },
	{ "[ -f x ] && echo y", 0, "([ -f x ] && echo y)", NULL, NULL },
	{ "ls ~ ~/x ~root/y a~b", 0, "ls ~ ~/x ~root/y a~b", NULL, NULL },
	{ "PATH=~/bin:~/sbin cmd", 0, "PATH=~/bin:~/sbin cmd", NULL, NULL },
	/* command substitution */
	{ "echo $(id -u)", 0, "echo <$(id -u)>", "id -u / echo <$(id -u)>", NULL },
	{ "echo `id -u`", 0, "echo <`id -u`>", "id -u / echo <`id -u`>", NULL },
	{ "echo $(echo $(whoami))", 0, NULL, "whoami / echo $(whoami) / echo <$(echo $(whoami))>", NULL },
	{ "echo `echo \\`whoami\\``", 0, NULL, "whoami / echo `whoami` / echo <`echo \\`whoami\\``>", NULL },
	{ "echo \"$(curl -s x | sh)\"", 0, NULL, "curl -s x / sh / echo <$(curl -s x | sh)>", NULL },
	{ "echo $(case x in x) id;; esac)", 0, NULL, "id / echo <$(case x in x) id;; esac)>", NULL },
	{ "echo $(echo ')')", 0, NULL, "echo ) / echo <$(echo ')')>", NULL },
	{ "echo $( )", 0, NULL, "echo <$( )>", NULL },
	{ "x=$(id) y=`uname`", 0, "x=$(id) y=`uname`", "id / uname / -", NULL },
	{ "cat $(find . -name '*.c')", 0, NULL, "find . -name *.c / cat <$(find . -name '*.c')>", NULL },
	{ "echo $(echo a; echo b)", 0, NULL, "echo a / echo b / echo <$(echo a; echo b)>", NULL },
	{ "echo $(id", 0, NULL, NULL, "unterminated command substitution at 6" },
	{ "echo `id", 0, NULL, NULL, "unterminated backquote at 6" },
	{ "echo $(echo 'x)", 0, NULL, NULL, "unterminated single quote at 13" },
	{ "echo `echo 'x`", 0, NULL, NULL, "unterminated single quote at 12" },
	{ "echo $(fi)", 0, NULL, NULL, "syntax error: unexpected 'fi' at 8" },
	/* process substitution */
	{ "diff <(ls a) <(ls b)", 0, NULL, "ls a / ls b / diff <<(ls a)> <<(ls b)>", NULL },
	{ "tee >(wc -l) < f", 0, "tee <>(wc -l)> 0<f", "wc -l / tee <>(wc -l)>", NULL },
	{ "diff <(ls a) x", P, NULL, NULL, "syntax error: missing target of '<' (found '(') at 7" },
	/* operators */
	{ "a | b | c", 0, "(a | b | c)", "a / b / c", NULL },
	{ "a && b || c", 0, "(a && b || c)", NULL, NULL },
	{ "a; b; c", 0, "a; b; c", NULL, NULL },
	{ "a;b;c", 0, "a; b; c", NULL, NULL },
	{ "a & b &", 0, "a& b&", NULL, NULL },
	{ "a\nb\n", 0, "aNL bNL", NULL, NULL },
	{ "a && b | c || d; e", 0, "(a && (b | c) || d); e", NULL, NULL },
	{ "! a | b", 0, "(! a | b)", NULL, NULL },
	{ "! a", 0, "(! a)", NULL, NULL },
	{ "a |& b", 0, "(a |& b)", NULL, NULL },
	{ "a &&\n b", 0, "(a && b)", NULL, NULL },
	{ "a |\n\n b", 0, "(a | b)", NULL, NULL },
	{ "a||b&&c", 0, "(a || b && c)", NULL, NULL },
	{ "a &;", 0, NULL, NULL, "syntax error: unexpected ';' at 4" },
	{ "; a", 0, NULL, NULL, "syntax error: unexpected ';' at 1" },
	{ "a ;; b", 0, NULL, NULL, "syntax error: unexpected ';;' at 3" },
	{ "a | | b", 0, NULL, NULL, "syntax error: unexpected '|' at 5" },
	{ "a &&", 0, NULL, NULL, "syntax error: unexpected end of input at 5" },
	{ "| a", 0, NULL, NULL, "syntax error: unexpected '|' at 1" },
	{ "a || ", 0, NULL, NULL, "syntax error: unexpected end of input at 6" },
	/* redirections */
	{ "cmd > f", 0, "cmd 1>f", NULL, NULL },
	{ "cmd >f <g >>h", 0, "cmd 1>f 0<g 1>>h", NULL, NULL },
	{ "cmd 2>err 2>>err2", 0, "cmd 2>err 2>>err2", NULL, NULL },
	{ "cmd 2>&1", 0, "cmd 2>&1", NULL, NULL },
	{ "cmd >&2", 0, "cmd 1>&2", NULL, NULL },
	{ "cmd 3<&0 4>&- <&-", 0, "cmd 3<&0 4>&- 0<&-", NULL, NULL },
	{ "cmd &> all", 0, "cmd &>all", NULL, NULL },
	{ "cmd &>> all", 0, "cmd &>>all", NULL, NULL },
	{ "cmd >& all", 0, "cmd &>all", NULL, NULL },
	{ "cmd &> all", P, "cmd& 1>all", "cmd / -", NULL },
	{ "cmd >| f", 0, "cmd 1>|f", NULL, NULL },
	{ "cmd <> f", 0, "cmd 0<>f", NULL, NULL },
	{ "cmd 5<>f", 0, "cmd 5<>f", NULL, NULL },
	{ "cmd <<< 'some text'", 0, "cmd 0<<<<some text>", NULL, NULL },
	{ "cmd <<<$(id)", 0, NULL, "id / cmd", NULL },
	{ "cat x > ~/.bashrc", 0, "cat x 1>~/.bashrc", NULL, NULL },
	{ "> f", 0, "1>f", "-", NULL },
	{ ">f cmd a", 0, "cmd a 1>f", NULL, NULL },
	{ "cmd 2> \"$(mktemp)\"", 0, NULL, "mktemp / cmd", NULL },
	{ "echo 2>x", 0, "echo 2>x", NULL, NULL },
	{ "echo a2>x", 0, "echo a2 1>x", NULL, NULL },
	{ "echo 2 >x", 0, "echo 2 1>x", NULL, NULL },
	{ "cmd >", 0, NULL, NULL, "syntax error: missing target of '>' (found end of input) at 6" },
	{ "cmd > | x", 0, NULL, NULL, "syntax error: missing target of '>' (found '|') at 7" },
	{ "cmd < ;", 0, NULL, NULL, "syntax error: missing target of '<' (found ';') at 7" },
	/* heredocs */
	{ "cat <<EOF\nhello\nEOF\n", 0, "cat 0<<EOF[hello\n]NL", NULL, NULL },
	{ "cat <<EOF\n$(id)\nEOF\necho after", 0, NULL, "id / cat / echo after", NULL },
	{ "cat <<'EOF'\n$(id)\nEOF\n", 0, "cat 0<<q:EOF[$(id)\n]NL", "cat", NULL },
	{ "cat <<\"EOF\"\n`id`\nEOF\n", 0, NULL, "cat", NULL },
	{ "cat <<\\EOF\n`id`\nEOF\n", 0, NULL, "cat", NULL },
	{ "cat <<-EOF\n\tindented\n\tEOF\n", 0, "cat 0<<-EOF[indented\n]NL", NULL, NULL },
	{ "cat <<A; cat <<B\na\nA\nb\nB\n", 0, "cat 0<<A[a\n]; cat 0<<B[b\n]NL", NULL, NULL },
	{ "cat <<EOF | wc -l\nx\nEOF\n", 0, "(cat 0<<EOF[x\n] | wc -l)NL", NULL, NULL },
	{ "cat <<EOF\nno end", 0, "cat 0<<EOF[no end]NL", NULL, NULL },
	{ "cat <<EOF\n$HOME \\$x \\y\nEOF\n", 0, "cat 0<<EOF[$HOME $x \\y\n]NL", NULL, NULL },
	{ "cat <<EOF\nEOF\n", 0, "cat 0<<EOF[]NL", NULL, NULL },
	{ "x=$(cat <<EOF\nin sub $(id)\nEOF\n)", 0, NULL, "id / cat / -", NULL },
	{ "cat <<EOF; rm -rf x\nbody; rm -rf y\nEOF\n", 0, NULL, "cat / rm -rf x", NULL },
	/* comments */
	{ "echo a # comment", 0, "echo a", NULL, NULL },
	{ "# only a comment", 0, "", "", NULL },
	{ "echo a#b", 0, "echo a#b", NULL, NULL },
	{ "echo '#x' \"#y\" \\#z", 0, "echo #x #y #z", NULL, NULL },
	{ "echo a # c; rm -rf x\necho b", 0, "echo aNL echo b", "echo a / echo b", NULL },
	{ "echo ${#x}", 0, "echo ${#x}", NULL, NULL },
	/* assignments */
	{ "A=1 B=2 cmd x=y", 0, "A=1 B=2 cmd x=y", "cmd x=y", NULL },
	{ "A=1", 0, "A=1", "-", NULL },
	{ "A=\"a b\" cmd", 0, "<A=a b> cmd", NULL, NULL },
	{ "\"A\"=1 cmd", 0, "A=1 cmd", "A=1 cmd", NULL },
	{ "1A=x cmd", 0, "1A=x cmd", "1A=x cmd", NULL },
	{ "A=*.c", 0, "A=*.c", NULL, NULL },
	{ "a=(1 2)", 0, "a=(1 2)", "-", NULL },
	{ "a+=(x\n $(id) [k]=$(uname)) b", 0, NULL, "id / uname / b", NULL },
	{ "a[i+1]=x b[$(id)]+=y", 0, "a[i+1]=x b[$(id)]+=y", "id / -", NULL },
	{ "a['$(id)']=1", 0, NULL, NULL, "single quote in an array subscript is not supported at 3" },
	{ "a=(['$(id)']=1)", 0, NULL, NULL, "single quote in an array subscript is not supported at 5" },
	{ "declare -a a=(x $(id)) b[$(uname)]=1", 0, "declare -a a=(x $(id)) b[$(uname)]=1",
	  "id / uname / declare -a a=(x $(id)) b[$(uname)]=1", NULL },
	{ "a[1]=(x)", 0, NULL, NULL, "syntax error: a list assigned to an array element at 1" },
	{ "a[ '$(id)' ]=1", 0, NULL, NULL, "array subscript with a blank is not supported at 2" },
	{ "a=([ '$(id)' ]=1)", 0, NULL, NULL, "array subscript with a blank is not supported at 4" },
	{ "echo a[ x", 0, "echo a[ x", NULL, NULL },
	{ "a=(1 2)", P, NULL, NULL, "syntax error: unexpected '(' at 3" },
	{ "A+=x cmd", 0, "A+=x cmd", "cmd", NULL },
	/* subshells and groups */
	{ "(cd x && make)", 0, "sub((cd x && make))", "cd x / make", NULL },
	{ "(a; b) > f", 0, "sub(a; b) 1>f", NULL, NULL },
	{ "{ a; b; } 2>&1 | c", 0, "(brace(a; b;) 2>&1 | c)", NULL, NULL },
	{ "{ a\n}", 0, "brace(aNL)", NULL, NULL },
	{ "(a) && (b)", 0, "(sub(a) && sub(b))", NULL, NULL },
	{ "((a))", P, "sub(sub(a))", "a", NULL },
	{ "((x++))", 0, "((x++))", "", NULL },
	{ "(( x = $(id) + a[$(uname)] )) && b", 0, NULL, "id / uname / b", NULL },
	{ "( (a) )", 0, "sub(sub(a))", "a", NULL },
	{ "((a) )", 0, "sub(sub(a))", "a", NULL },
	{ "((1+2", 0, NULL, NULL, "unterminated arithmetic command at 1" },
	{ "( a", 0, NULL, NULL, "syntax error: unexpected end of input at 4" },
	{ "a )", 0, NULL, NULL, "syntax error: unexpected ')' at 3" },
	{ "()", 0, NULL, NULL, "syntax error: unexpected ')' at 2" },
	{ "{ a }", 0, NULL, NULL, "syntax error: expected '}' but found end of input at 6" },
	{ "{a; }", 0, NULL, NULL, "syntax error: unexpected '}' at 5" },
	{ "echo { }", 0, "echo { }", NULL, NULL },
	/* if */
	{ "if a; then b; fi", 0, "if(a;)then(b;)", "a / b", NULL },
	{ "if a; then b; elif c; then d; else e; fi", 0,
	  "if(a;)then(b;)elif(c;)then(d;)else(e;)", "a / b / c / d / e", NULL },
	{ "if a\nthen\n b\nfi", 0, "if(aNL)then(bNL)", NULL, NULL },
	{ "if $(id); then :; fi > f", 0, NULL, "id / $(id) / :", NULL },
	{ "if a; then b; fi; c", 0, "if(a;)then(b;); c", NULL, NULL },
	{ "if a; then b", 0, NULL, NULL, "syntax error: expected 'fi' but found end of input at 13" },
	{ "if a; b; fi", 0, NULL, NULL, "syntax error: expected 'then' but found 'fi' at 10" },
	{ "if then b; fi", 0, NULL, NULL, "syntax error: unexpected 'then' at 4" },
	{ "fi", 0, NULL, NULL, "syntax error: unexpected 'fi' at 1" },
	{ "then", 0, NULL, NULL, "syntax error: unexpected 'then' at 1" },
	/* for, while, until */
	{ "for f in *.c; do gcc -c \"$f\"; done", 0, "for f in(*.c)do(gcc -c $f;)", "gcc -c $f", NULL },
	{ "for f in a b\ndo\necho $f\ndone", 0, "for f in(a b)do(echo $fNL)", NULL, NULL },
	{ "for f; do echo $f; done", 0, "for fdo(echo $f;)", NULL, NULL },
	{ "for f do echo; done", 0, "for fdo(echo;)", NULL, NULL },
	{ "for f in; do echo; done", 0, "for f in()do(echo;)", NULL, NULL },
	{ "for f in $(ls); do rm $f; done", 0, NULL, "ls / rm $f", NULL },
	{ "for 1x in a; do b; done", 0, NULL, NULL, "syntax error: bad for loop variable at 5" },
	{ "for ((i=0;i<3;i++)); do b; done", 0, "for((i=0;i<3;i++))do(b;)", "b", NULL },
	{ "for (( ; ; )) { b; }", 0, "for((< >;< >;< >))do(brace(b;))", "b", NULL },
	{ "for ((i=$(id); i<$(uname); i++)); do b; done", 0, NULL, "id / uname / b", NULL },
	{ "for ((i=0;i<3)); do b; done", 0, NULL, NULL, "syntax error: expected ';' in for ((…)) at 5" },
	{ "for x in a b; do c; ", 0, NULL, NULL, "syntax error: expected 'done' but found end of input at 21" },
	{ "while read l; do echo \"$l\"; done < f", 0, "while(read l;)do(echo $l;) 0<f", NULL, NULL },
	{ "until make; do sleep 1; done", 0, "until(make;)do(sleep 1;)", NULL, NULL },
	{ "while :; do :; done &", 0, "while(:;)do(:;)&", NULL, NULL },
	{ "cmd | while read x; do y; done", 0, "(cmd | while(read x;)do(y;))", NULL, NULL },
	{ "while a; do", 0, NULL, NULL, "syntax error: unexpected end of input at 12" },
	{ "done", 0, NULL, NULL, "syntax error: unexpected 'done' at 1" },
	/* case */
	{ "case $x in a) b;; c|d) e;; esac", 0, "case $x in(a)=>(b);;(c|d)=>(e);;", "b / e", NULL },
	{ "case x in (a) b;; esac", 0, "case x in(a)=>(b);;", NULL, NULL },
	{ "case x in a) b; esac", 0, "case x in(a)=>(b;);;", NULL, NULL },
	{ "case x in\n a)\n b\n ;;\n *) c;;\nesac", 0, "case x in(a)=>(bNL);;(*)=>(c);;", NULL, NULL },
	{ "case x in esac", 0, "case x in", NULL, NULL },
	{ "case x in a) ;; esac", 0, "case x in(a)=>();;", NULL, NULL },
	{ "case x in a) b;& c) d;;& esac", 0, "case x in(a)=>(b);&(c)=>(d);;&", NULL, NULL },
	{ "case $(id) in $(uname)) ls;; esac", 0, NULL, "id / uname / ls", NULL },
	{ "case x in a) b;; ", 0, NULL, NULL, "syntax error: expected 'esac' but found end of input at 18" },
	{ "case x a) b;; esac", 0, NULL, NULL, "syntax error: expected 'in' but found 'a' at 8" },
	{ "case x in a b) c;; esac", 0, NULL, NULL, "syntax error: expected ')' but found 'b' at 13" },
	/* functions */
	{ "f() { echo hi; }", 0, "fn f(brace(echo hi;))", "echo hi", NULL },
	{ "f () ( a )", 0, "fn f(sub(a))", NULL, NULL },
	{ "function f { a; }", 0, "fn f(brace(a;))", NULL, NULL },
	{ "function f() { a; }", 0, "fn f(brace(a;))", NULL, NULL },
	{ "f() { a; }; f", 0, "fn f(brace(a;)); f", NULL, NULL },
	{ "f() echo", 0, NULL, NULL, "syntax error: function body must be a compound command at 5" },
	{ "f( x", 0, NULL, NULL, "syntax error: expected ')' of a function definition at 4" },
	{ "function f { a; }", P, NULL, NULL, "syntax error: unexpected '}' at 17" },
	/* keywords where they are not keywords */
	{ "echo if then else fi do done case esac in", 0, "echo if then else fi do done case esac in", NULL, NULL },
	{ "echo for while until { } !", 0, "echo for while until { } !", NULL, NULL },
	{ "'if' a", 0, "if a", "if a", NULL },
	{ "\\if a", 0, "if a", NULL, NULL },
	{ "iff; fii", 0, "iff; fii", NULL, NULL },
	{ "x=if cmd", 0, "x=if cmd", NULL, NULL },
	{ "echo done; done", 0, NULL, NULL, "syntax error: unexpected 'done' at 12" },
	/* [[ ]] (bash), select, coproc, alias */
	{ "[[ -f x && $y < z ]] && echo ok", 0, "([[ -f x && $y < z ]] && echo ok)", "echo ok", NULL },
	{ "[[ $(id) == root ]]", 0, NULL, "id", NULL },
	{ "[[ -f x", 0, NULL, NULL, "unterminated [[ at 1" },
	{ "[[ -f x ]]", P, "[[ -f x ]]", "[[ -f x ]]", NULL },
	{ "select x in a $(id); do b; done", 0, "select x in(a $(id))do(b;)", "id / b", NULL },
	{ "coproc cat", 0, "coproc (cat)", "cat", NULL },
	{ "coproc N { rm x; }", 0, "coproc N(brace(rm x;))", "rm x", NULL },
	{ "coproc N x", 0, "coproc (N x)", "N x", NULL },
	{ "[[ $x =~ ^(a|b)$ && $(id) ]]", 0, "[[ $x =~ ^(a|b)$ && $(id) ]]", "id", NULL },
	{ "[[ $x =~ (a|$(id)) ]]", 0, NULL, "id", NULL },
	{ "ls @(a|b) !(*.c) +(x|$(id))", 0, "ls @(a|b) !(*.c) +(x|$(id))", "id / ls @(a|b) !(*.c) +(x|$(id))", NULL },
	{ "case x in @(a|b)) c;; esac", 0, "case x in(@(a|b))=>(c);;", "c", NULL },
	{ "!(rm x)", 0, NULL, NULL, "'!(' at a command's start (write '! (') is not supported at 1" },
	{ "! (a)", 0, "(! sub(a))", "a", NULL },
	{ "time { a; } 2>&1", 0, "brace(a;) 2>&1", "a", NULL },
	{ "time -p ( a )", 0, "sub(a)", "a", NULL },
	{ "time", 0, "time", "time", NULL },
	{ "alias ls='rm -rf'", 0, NULL, NULL, "alias definition is not supported at 1" },
	{ "alias", 0, "alias", NULL, NULL },
	{ "command alias ls=rm", 0, NULL, NULL, "alias definition is not supported at 1" },
	{ "builtin -- alias ls=rm", 0, NULL, NULL, "alias definition is not supported at 1" },
	/* wrappers are ordinary commands to the parser */
	{ "env -i sh -c 'rm -rf x'", 0, "env -i sh -c <rm -rf x>", NULL, NULL },
	{ "time -p make", 0, "make", NULL, NULL },
	{ "time -p make", P, "time -p make", NULL, NULL },
	/* brace expansion (bash) */
	{ "echo {a,b}", 0, "echo {a,b}", NULL, NULL },
	{ "{rm,-rf,x}", 0, "{rm,-rf,x}", "{rm,-rf,x}", NULL },
	/* unterminated quotes: the column of the opening quote */
	{ "echo 'hello world", 0, NULL, NULL, "unterminated single quote at 6" },
	{ "echo \"hello", 0, NULL, NULL, "unterminated double quote at 6" },
	{ "echo ok; echo 'x", 0, NULL, NULL, "unterminated single quote at 15" },
	{ "echo \"a $(b\"", 0, NULL, NULL, "unterminated double quote at 12" },
	{ "echo $'abc", 0, NULL, NULL, "unterminated single quote at 6" },
	{ "echo \"`id\"", 0, NULL, NULL, "unterminated backquote at 7" },
	{ "a\necho 'x\ny", 0, NULL, NULL, "unterminated single quote at 8" },
	{ "echo $(echo `id)`)", 0, NULL, NULL, "syntax error: unexpected ')' at 16" },
	{ "echo `echo $(id`", 0, NULL, NULL, "unterminated command substitution at 12" },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

START_TEST(test_rows)
{
	const struct row *r = &rows[_i];
	struct ward_sh_tree *t = NULL;
	struct ward_error *err = NULL;
	int rc = ward_sh_parse(r->src, strlen(r->src), r->flags, &t, &err);

	if (r->err) {
		ck_assert_msg(rc < 0, "row %d: '%s' parsed, expected '%s'", _i, r->src, r->err);
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
		ck_assert_msg(strcmp(err->message, r->err) == 0, "row %d: '%s': got '%s', expected '%s'",
			      _i, r->src, err->message, r->err);
		ward_error_free(err);
		return;
	}
	ck_assert_msg(rc == 0, "row %d: '%s': %s", _i, r->src, err ? err->message : "?");
	if (r->tree) {
		char *d = shdump_tree(t);

		ck_assert_msg(strcmp(d, r->tree) == 0, "row %d: '%s': tree '%s', expected '%s'", _i,
			      r->src, d, r->tree);
		free(d);
	}
	if (r->cmds) {
		char *d = shdump_cmds(t);

		ck_assert_msg(strcmp(d, r->cmds) == 0, "row %d: '%s': commands '%s', expected '%s'", _i,
			      r->src, d, r->cmds);
		free(d);
	}
	ward_sh_tree_free(t);
}
END_TEST

static struct ward_sh_tree *parse_ok(const char *s, unsigned flags)
{
	struct ward_sh_tree *t = NULL;
	struct ward_error *err = NULL;

	ck_assert_msg(ward_sh_parse(s, strlen(s), flags, &t, &err) == 0, "'%s': %s", s,
		      err ? err->message : "?");
	return t;
}

static const struct ward_sh_node *first_simple(const struct ward_sh_node *n)
{
	if (n->kind == WARD_SH_SIMPLE)
		return n;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct ward_sh_node *f = first_simple(n->kids[i]);

		if (f)
			return f;
	}
	return NULL;
}

/* Offsets: every node, word, part and redirect points back at its source. */
START_TEST(test_offsets)
{
	const char *s = "echo  'a b'\"c\" >out 2>&1 && ls x | wc";
	struct ward_sh_tree *t = parse_ok(s, 0);
	const struct ward_sh_node *ao = t->root->kids[0], *c;

	ck_assert_int_eq(ao->kind, WARD_SH_AND_OR);
	ck_assert_uint_eq(ao->off, 0);
	ck_assert_uint_eq(ao->op_offs[0], 25);
	c = ao->kids[0];
	ck_assert_int_eq(c->kind, WARD_SH_SIMPLE);
	ck_assert_uint_eq(c->words[1].off, 6);
	ck_assert_uint_eq(c->words[1].len, 8);
	ck_assert_str_eq(c->words[1].text, "a bc");
	ck_assert_uint_eq(c->words[1].n_parts, 2);
	ck_assert_int_eq(c->words[1].parts[0].quote, WARD_SH_Q_SINGLE);
	ck_assert_uint_eq(c->words[1].parts[1].off, 12); /* inside the "" */
	ck_assert_int_eq(c->words[1].parts[1].quote, WARD_SH_Q_DOUBLE);
	ck_assert_uint_eq(c->n_redirs, 2);
	ck_assert_uint_eq(c->redirs[0].off, 15);
	ck_assert_uint_eq(c->redirs[0].len, 4);
	ck_assert_uint_eq(c->redirs[0].target.off, 16);
	ck_assert_uint_eq(c->redirs[1].off, 20);
	ck_assert_int_eq(c->redirs[1].fd, 2);
	ck_assert(c->redirs[1].fd_explicit);
	ck_assert_int_eq(c->redirs[1].dup_fd, 1);
	ck_assert_int_eq(ao->kids[1]->kind, WARD_SH_PIPELINE);
	ck_assert_uint_eq(ao->kids[1]->off, 28);
	ck_assert_uint_eq(ao->kids[1]->kids[1]->off, 35);
	ck_assert_uint_eq(ao->kids[1]->op_offs[0], 33);
	ck_assert_ptr_eq(ao->kids[1]->kids[1]->parent, ao->kids[1]);
	ward_sh_tree_free(t);
}
END_TEST

static int collect_off(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	size_t *offs = data;

	offs[offs[0] + 1] = n->off;
	offs[offs[0] + 2] = info->sub_depth;
	offs[0] += 2;
	return 0;
}

/* Backticks are parsed from their unescaped text: offsets still point into
 * the source. */
START_TEST(test_backtick_offsets)
{
	const char *s = "echo `ls \\`pwd\\``";
	struct ward_sh_tree *t = parse_ok(s, 0);
	size_t offs[16] = { 0 };

	ward_sh_visit_commands(t, collect_off, offs);
	ck_assert_uint_eq(offs[0], 6);
	ck_assert_uint_eq(offs[1], 11); /* pwd */
	ck_assert_uint_eq(offs[2], 2);
	ck_assert_uint_eq(offs[3], 6);  /* ls */
	ck_assert_uint_eq(offs[4], 1);
	ck_assert_uint_eq(offs[5], 0);  /* echo */
	ck_assert_uint_eq(offs[6], 0);
	ward_sh_tree_free(t);
}
END_TEST

START_TEST(test_word_parts)
{
	struct ward_sh_tree *t = parse_ok("cp ~/a/*.c \"$HOME\"/x${Y:-z}$(id)`w` $((1)) <(ls) 'q' {a,b}", 0);
	const struct ward_sh_node *c = first_simple(t->root);
	const struct ward_sh_word *w;

	ck_assert_uint_eq(c->n_words, 7);
	w = &c->words[1];
	ck_assert_uint_eq(w->flags & WARD_SH_W_DYNAMIC, WARD_SH_W_TILDE | WARD_SH_W_GLOB);
	ck_assert_int_eq(w->parts[0].kind, WARD_SH_P_TILDE);
	ck_assert_str_eq(w->parts[0].text, "");
	ck_assert_int_eq(w->parts[2].kind, WARD_SH_P_GLOB);
	w = &c->words[2];
	ck_assert_uint_eq(w->flags, WARD_SH_W_PARAM | WARD_SH_W_CMDSUB | WARD_SH_W_QUOTED |
				    WARD_SH_W_BACKTICK);
	ck_assert_int_eq(w->parts[0].kind, WARD_SH_P_PARAM);
	ck_assert_str_eq(w->parts[0].text, "HOME");
	ck_assert_int_eq(w->parts[0].quote, WARD_SH_Q_DOUBLE);
	ck_assert_int_eq(w->parts[2].kind, WARD_SH_P_PARAM);
	ck_assert_str_eq(w->parts[2].op, ":-");
	ck_assert(w->parts[2].braced);
	ck_assert_str_eq(w->parts[2].arg->text, "z");
	ck_assert_int_eq(w->parts[3].kind, WARD_SH_P_CMDSUB);
	ck_assert(!w->parts[3].backtick);
	ck_assert_int_eq(w->parts[4].kind, WARD_SH_P_CMDSUB);
	ck_assert(w->parts[4].backtick);
	ck_assert_uint_eq(c->words[3].flags, WARD_SH_W_ARITH);
	ck_assert_uint_eq(c->words[4].flags, WARD_SH_W_PROCSUB);
	ck_assert_int_eq(c->words[4].parts[0].procsub_dir, '<');
	ck_assert_uint_eq(c->words[5].flags, WARD_SH_W_QUOTED);
	ck_assert_uint_eq(c->words[6].flags, WARD_SH_W_BRACE);
	ward_sh_tree_free(t);
	t = parse_ok("echo {a,b}", WARD_SH_POSIX);
	ck_assert_uint_eq(first_simple(t->root)->words[1].flags, 0);
	ward_sh_tree_free(t);
}
END_TEST

START_TEST(test_heredoc_parts)
{
	struct ward_sh_tree *t = parse_ok("cat <<E >o\na $(id) \\$b $c\nE\n", 0);
	const struct ward_sh_node *c = first_simple(t->root);
	const struct ward_sh_redir *r = &c->redirs[0];

	ck_assert_int_eq(r->op, WARD_SH_R_HEREDOC);
	ck_assert(!r->quoted_delim);
	ck_assert_str_eq(r->target.text, "E");
	ck_assert_str_eq(r->body.text, "a $(id) $b $c\n");
	ck_assert_uint_eq(r->body.off, 11);
	ck_assert(r->body.flags & WARD_SH_W_CMDSUB);
	ck_assert(r->body.flags & WARD_SH_W_PARAM);
	ck_assert_int_eq(c->redirs[1].op, WARD_SH_R_OUT);
	ward_sh_tree_free(t);
}
END_TEST

static int stop_at_second(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	int *count = data;

	return ++*count == 2 ? 42 : 0;
}

static int record_ctx(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	char *buf = data;
	static const char *const names[] = { "top", "cmdsub", "backtick", "procsub" };

	snprintf(buf + strlen(buf), 256 - strlen(buf), "%s%s:%s:%u", *buf ? " " : "",
		 n->words[0].text, names[info->context], info->sub_depth);
	return 0;
}

START_TEST(test_visit)
{
	struct ward_sh_tree *t = parse_ok("a $(b `c`) <(d) && { e; }", 0);
	char buf[256] = "";
	int count = 0;

	ck_assert_int_eq(ward_sh_visit_commands(t, stop_at_second, &count), 42);
	ck_assert_int_eq(count, 2);
	ward_sh_visit_commands(t, record_ctx, buf);
	ck_assert_str_eq(buf, "c:backtick:2 b:cmdsub:1 d:procsub:1 a:top:0 e:top:0");
	ward_sh_tree_free(t);
}
END_TEST

static int count_kinds(const struct ward_sh_node *n, const struct ward_sh_visit_info *info, void *data)
{
	unsigned *k = data;

	k[n->kind]++;
	return 0;
}

START_TEST(test_visit_nodes)
{
	struct ward_sh_tree *t = parse_ok("if a | b; then (c && d); fi; for x in $(e); do f; done", 0);
	unsigned k[16] = { 0 };

	ward_sh_visit_nodes(t, count_kinds, k);
	ck_assert_uint_eq(k[WARD_SH_SIMPLE], 6);
	ck_assert_uint_eq(k[WARD_SH_PIPELINE], 1);
	ck_assert_uint_eq(k[WARD_SH_AND_OR], 1);
	ck_assert_uint_eq(k[WARD_SH_SUBSHELL], 1);
	ck_assert_uint_eq(k[WARD_SH_IF], 1);
	ck_assert_uint_eq(k[WARD_SH_FOR], 1);
	ward_sh_tree_free(t);
}
END_TEST

/* ---- the no-shell chain ---- */

struct chain_row {
	const char *src;
	const char *want; /* segments "argv0 argv1 {op}" or the error */
};

static const struct chain_row chain_rows[] = {
	{ "a b | c && d || e; f\ng", "a b | c && d || e ; f NL g" },
	{ "a >f 2>&1 <g", "a" },
	{ "a $HOME \"${USER}x\"", "a $HOME ${USER}x" },
	{ "a;", "a" },
	{ "X=1 a", "a" },
	{ "", "empty command" },
	{ "echo $(date)", "command substitution is not supported in --no-shell mode at 6" },
	{ "echo `date`", "command substitution is not supported in --no-shell mode at 6" },
	{ "ls *.c", "glob is not supported in --no-shell mode at 4" },
	{ "ls ~/x", "tilde expansion is not supported in --no-shell mode at 4" },
	{ "cat <<E\nx\nE", "here-document is not supported in --no-shell mode at 5" },
	{ "cat <<< x", "here-string is not supported in --no-shell mode at 5" },
	{ "sleep 1 &", "background job '&' is not supported in --no-shell mode at 9" },
	{ "a; sleep 1 & b", "background job '&' is not supported in --no-shell mode at 12" },
	{ "(a)", "subshell is not supported in --no-shell mode at 1" },
	{ "a && { b; }", "brace group is not supported in --no-shell mode at 6" },
	{ "if a; then b; fi", "if statement is not supported in --no-shell mode at 1" },
	{ "for x in a; do b; done", "for loop is not supported in --no-shell mode at 1" },
	{ "while a; do b; done", "while loop is not supported in --no-shell mode at 1" },
	{ "a | until b; do c; done", "until loop is not supported in --no-shell mode at 5" },
	{ "case x in a) b;; esac", "case statement is not supported in --no-shell mode at 1" },
	{ "f() { a; }", "function definition is not supported in --no-shell mode at 1" },
	{ "diff <(a) b", "process substitution is not supported in --no-shell mode at 6" },
	{ "echo $((1+1))", "arithmetic expansion is not supported in --no-shell mode at 6" },
	{ "echo {a,b}", "brace expansion is not supported in --no-shell mode at 6" },
	{ "echo ${x:-y}", "parameter expansion with an operator is not supported in --no-shell mode at 6" },
	{ "echo $?", "special parameter '$?' is not supported in --no-shell mode at 6" },
	{ "echo $1", "special parameter '$1' is not supported in --no-shell mode at 6" },
	{ "! a", "pipeline negation '!' is not supported in --no-shell mode at 1" },
	{ "a |& b", "'|&' is not supported in --no-shell mode at 3" },
	{ "> f", "a redirection without a command is not supported in --no-shell mode at 1" },
	{ "X=1", "an assignment without a command is not supported in --no-shell mode at 1" },
	{ "a >&$fd", "a redirection to this file descriptor is not supported in --no-shell mode at 5" },
	{ "a 12>f", "a file descriptor above 9 is not supported in --no-shell mode at 3" },
	{ "[[ -f x ]]", "conditional expression is not supported in --no-shell mode at 1" },
	{ "cat > $(mktemp)", "command substitution is not supported in --no-shell mode at 7" },
};

#define N_CHAIN (sizeof(chain_rows) / sizeof(chain_rows[0]))

START_TEST(test_chain_rows)
{
	const struct chain_row *r = &chain_rows[_i];
	struct ward_sh_tree *t = parse_ok(r->src, 0);
	struct ward_sh_chain *c = NULL;
	struct ward_error *err = NULL;
	char got[1100] = "";

	if (ward_sh_chain_build(t, &c, &err) < 0) {
		ck_assert_int_eq(err->kind, WARD_ERR_INVALID_PARAMETERS);
		snprintf(got, sizeof(got), "%s", err->message);
		ward_error_free(err);
	} else {
		for (size_t i = 0; i < c->n_segs; i++) {
			const struct ward_sh_segment *g = &c->segs[i];

			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
				 g->words[0].text);
			for (size_t k = 1; k < g->n_words; k++)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s",
					 g->words[k].text);
			if (g->op != WARD_SH_OP_END)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s",
					 g->op == WARD_SH_OP_NEWLINE ? "NL" : ward_sh_op_str(g->op));
		}
		ward_sh_chain_free(c);
	}
	ck_assert_msg(strcmp(got, r->want) == 0, "'%s': got '%s', expected '%s'", r->src, got, r->want);
	ward_sh_tree_free(t);
}
END_TEST

START_TEST(test_chain_details)
{
	struct ward_sh_tree *t = parse_ok("A=1 cmd x 2>>log >&2 | wc", 0);
	struct ward_sh_chain *c = NULL;
	struct ward_error *err = NULL;

	ck_assert_int_eq(ward_sh_chain_build(t, &c, &err), 0);
	ck_assert_uint_eq(c->n_segs, 2);
	ck_assert_uint_eq(c->segs[0].n_assigns, 1);
	ck_assert_str_eq(c->segs[0].assigns[0].text, "A=1");
	ck_assert_uint_eq(c->segs[0].n_redirs, 2);
	ck_assert_int_eq(c->segs[0].redirs[0].op, WARD_SH_R_APPEND);
	ck_assert_int_eq(c->segs[0].redirs[0].fd, 2);
	ck_assert_int_eq(c->segs[0].redirs[1].op, WARD_SH_R_DUP_OUT);
	ck_assert_int_eq(c->segs[0].redirs[1].dup_fd, 2);
	ck_assert_int_eq(c->segs[0].op, WARD_SH_OP_PIPE);
	ck_assert_uint_eq(c->segs[0].op_off, 21);
	ck_assert_uint_eq(c->segs[1].off, 23);
	ck_assert_int_eq(c->segs[1].op, WARD_SH_OP_END);
	ward_sh_chain_free(c);
	ward_sh_tree_free(t);
}
END_TEST

START_TEST(test_expand)
{
	char *env[] = { "HOME=/home/u", "EMPTY=", "SP=a b", NULL };
	struct ward_sh_tree *t = parse_ok("x $HOME/.cfg \"${SP}\"-$UNSET $EMPTY \"$EMPTY\" $EMPTY$UNSET 'l$HOME'", 0);
	const struct ward_sh_node *c = first_simple(t->root);
	struct ward_error *err = NULL;
	bool dropped;
	char *s;

	ck_assert_int_eq(ward_sh_word_expand(&c->words[1], env, &s, &dropped, &err), 0);
	ck_assert_str_eq(s, "/home/u/.cfg");
	ck_assert(!dropped);
	free(s);
	ck_assert_int_eq(ward_sh_word_expand(&c->words[2], env, &s, &dropped, &err), 0);
	ck_assert_str_eq(s, "a b-");
	free(s);
	ck_assert_int_eq(ward_sh_word_expand(&c->words[3], env, &s, &dropped, &err), 0);
	ck_assert_str_eq(s, "");
	ck_assert(dropped);
	free(s);
	ck_assert_int_eq(ward_sh_word_expand(&c->words[4], env, &s, &dropped, &err), 0);
	ck_assert(!dropped);
	free(s);
	ck_assert_int_eq(ward_sh_word_expand(&c->words[5], env, &s, &dropped, &err), 0);
	ck_assert(dropped);
	free(s);
	ck_assert_int_eq(ward_sh_word_expand(&c->words[6], env, &s, &dropped, &err), 0);
	ck_assert_str_eq(s, "l$HOME");
	free(s);
	ward_sh_tree_free(t);

	t = parse_ok("x $(id)", 0);
	ck_assert_int_eq(ward_sh_word_expand(&first_simple(t->root)->words[1], env, &s, &dropped, &err), -1);
	ck_assert_str_eq(err->message, "command substitution is not supported in --no-shell mode at 3");
	ward_error_free(err);
	ward_sh_tree_free(t);
}
END_TEST

START_TEST(test_limits)
{
	struct ward_sh_tree *t = NULL;
	struct ward_error *err = NULL;
	char deep[1200];
	size_t i, n = 0;

	for (i = 0; i < 150; i++)
		n += (size_t)sprintf(deep + n, "$(");
	for (i = 0; i < 150; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	ck_assert_int_eq(ward_sh_parse(deep, n, 0, &t, &err), -1);
	ck_assert_msg(strstr(err->message, "nesting too deep at ") == err->message, "%s", err->message);
	ward_error_free(err);
	err = NULL;
	ck_assert_int_eq(ward_sh_parse("echo a\0b", 8, 0, &t, &err), -1);
	ck_assert_str_eq(err->message, "nul byte at 7");
	ward_error_free(err);
	err = NULL;
	/* not NUL-terminated: only len bytes are read */
	ck_assert_int_eq(ward_sh_parse("echo abcdef", 6, 0, &t, &err), 0);
	ck_assert_str_eq(first_simple(t->root)->words[1].text, "a");
	ward_sh_tree_free(t);
	ck_assert_str_eq(ward_sh_kind_name(WARD_SH_CASE), "case statement");
	ck_assert_str_eq(ward_sh_op_str(WARD_SH_OP_OR), "||");
	ck_assert_str_eq(ward_sh_redir_str(WARD_SH_R_HERESTRING), "<<<");
}
END_TEST

/* Brace expansion: what bash itself makes of the same words. */
static const char *const brace_words[] = {
	"{a,b}", "x{1..3}y", "{a,b}{c,d}", "{a,{b,c}}", "'{a,b}'", "{a,'b,c'}", "{1..10..3}",
	"{c..a}", "{a}", "{}", "a{,b}", "{rm,-rf,x}", "{a..}", "{1..3}{a,b}", "pre{x,y}post",
	"\"{a,b}\"", "\\{a,b\\}", "{a\\,b,c}", "{-1..2}", "{a,b", "a}b{", "{a,b}}", "{{a,b}",
	"\"$HOME\"{a,b}", "{x,\"$HOME\"}", "${x}{a,b}", "{a,b}*.c", "~{a,b}", "{5..1..2}", "{a..e..2}",
	"x{a,b,c}y{1,2}z", "{1..3..-2}", "{a..c..-1}", "{3..1}",
};

START_TEST(test_brace_expand)
{
	const char *w = brace_words[_i];
	char src[256], bash[300], got[1024] = "";
	struct ward_sh_tree *t;
	struct ward_error *err = NULL;
	char **v, *out = NULL;
	size_t n;

	snprintf(src, sizeof(src), "x %s", w);
	t = parse_ok(src, 0);
	ck_assert_int_eq(ward_sh_word_brace_expand(t, &first_simple(t->root)->words[1], &v, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "[%s]", v[i]);
	ward_sh_strv_free(v, n);
	ward_sh_tree_free(t);
	/* bash prints the words with parameter expansion and globbing off */
	snprintf(bash, sizeof(bash), "set -f; HOME='$HOME'; x='${x}'; printf '[%%s]' %s", w);
	{
		char *argv[] = { (char *)"/bin/bash", (char *)"--norc", (char *)"-c", bash, NULL };

		ck_assert_int_eq(harness_capture(argv, &out, NULL), 0);
	}
	ck_assert_msg(strcmp(got, out) == 0, "%s: parser %s, bash %s", w, got, out);
	free(out);
}
END_TEST

START_TEST(test_brace_limit)
{
	struct ward_sh_tree *t = parse_ok("x {1..100000}", 0);
	struct ward_error *err = NULL;
	char **v;
	size_t n;

	ck_assert_int_eq(ward_sh_word_brace_expand(t, &first_simple(t->root)->words[1], &v, &n, &err), -1);
	ck_assert_str_eq(err->message, "brace expansion makes more than 4096 words at 3");
	ward_error_free(err);
	ward_sh_tree_free(t);
	t = parse_ok("x {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", 0);
	err = NULL;
	ck_assert_int_eq(ward_sh_word_brace_expand(t, &first_simple(t->root)->words[1], &v, &n, &err), -1);
	ward_error_free(err);
	ward_sh_tree_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shparse");
	TCase *tc = harness_tcase(s, "table", NULL);

	printf("# parser table cases: %zu, chain cases: %zu\n", N_ROWS, N_CHAIN);
	tcase_add_loop_test(tc, test_rows, 0, (int)N_ROWS);
	tc = harness_tcase(s, "structure", NULL);
	tcase_add_test(tc, test_offsets);
	tcase_add_test(tc, test_backtick_offsets);
	tcase_add_test(tc, test_word_parts);
	tcase_add_test(tc, test_heredoc_parts);
	tcase_add_test(tc, test_visit);
	tcase_add_test(tc, test_visit_nodes);
	tcase_add_test(tc, test_limits);
	tc = harness_tcase(s, "brace", NULL);
	tcase_add_loop_test(tc, test_brace_expand, 0, (int)(sizeof(brace_words) / sizeof(brace_words[0])));
	tcase_add_test(tc, test_brace_limit);
	tc = harness_tcase(s, "chain", NULL);
	tcase_add_loop_test(tc, test_chain_rows, 0, (int)N_CHAIN);
	tcase_add_test(tc, test_chain_details);
	tcase_add_test(tc, test_expand);
	return harness_main(s);
}
