package com.github.geminiidecompanion.core

/**
 * The companion's terminal environment as lines to paste into a terminal of the user's own choosing,
 * so that `gemini` (and `gemini-ide-companion tools` under any agent) started there finds this IDE.
 */
object TerminalEnv {
    /** `export NAME='value'` lines for POSIX shells, or `$env:NAME = 'value'` lines for PowerShell ([windows]). */
    fun exportLines(env: Map<String, String>, windows: Boolean): String =
        env.toSortedMap().entries.joinToString("") { (name, value) ->
            if (windows) "\$env:$name = '${value.replace("'", "''")}'\n"
            else "export $name='${value.replace("'", "'\\''")}'\n"
        }
}
