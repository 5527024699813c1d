"""Every Sublime API that plugin.py uses exists in Sublime Text 4's API.

Sublime Text cannot run here, so this keeps the plugin honest: the names
below are Sublime Text 4's documented API (https://www.sublimetext.com/docs/
api_reference.html, build 4145+). The test reads plugin.py with ``ast``,
works out which expressions are views, windows, settings, selections and
regions, and fails on any attribute of those (or of the ``sublime`` and
``sublime_plugin`` modules) that is not in the lists. It also checks that the
event handlers and command methods the plugin defines are ones Sublime calls
(a misspelt ``on_pre_close_windw`` would silently never run), and that the
stand-in modules used by the other tests offer nothing Sublime does not.
"""

import ast
import os
import unittest

import support

_w = str.split

DOCUMENTED = {
    "sublime": set(_w("""
        version platform arch channel executable_path executable_hash packages_path
        installed_packages_path cache_path status_message error_message message_dialog
        ok_cancel_dialog yes_no_cancel_dialog open_dialog save_dialog
        select_folder_dialog run_command format_command html_format_command
        command_url get_clipboard_async get_clipboard set_clipboard log_commands
        get_log_commands log_input get_log_input log_fps get_log_fps log_result_regex
        get_log_result_regex log_indexing get_log_indexing log_build_systems
        get_log_build_systems log_control_tree get_log_control_tree ui_info
        score_selector load_resource load_binary_resource find_resources
        encode_value decode_value expand_variables load_settings save_settings
        set_timeout set_timeout_async active_window windows get_macro make_sheet
        list_syntaxes syntax_from_path find_syntax_by_name find_syntax_by_scope
        find_syntax_for_file
        Window Edit Region HistoricPosition TextChange Selection Sheet TextSheet
        ImageSheet HtmlSheet ContextStackFrame View Buffer Settings Phantom
        PhantomSet Html CompletionList CompletionItem Syntax QuickPanelItem
        ListInputItem SymbolRegion SymbolLocation
        HOVER_TEXT HOVER_GUTTER HOVER_MARGIN ENCODED_POSITION TRANSIENT FORCE_GROUP
        SEMI_TRANSIENT ADD_TO_SELECTION REPLACE_MRU CLEAR_TO_RIGHT IGNORECASE LITERAL
        MONOSPACE_FONT KEEP_OPEN_ON_FOCUS_LOST WANT_EVENT HTML
        COOPERATE_WITH_AUTO_COMPLETE HIDE_ON_MOUSE_MOVE HIDE_ON_MOUSE_MOVE_AWAY
        KEEP_ON_SELECTION_MODIFIED HIDE_ON_CHARACTER_EVENT DRAW_EMPTY HIDE_ON_MINIMAP
        DRAW_EMPTY_AS_OVERWRITE PERSISTENT DRAW_OUTLINED DRAW_NO_FILL DRAW_NO_OUTLINE
        DRAW_SOLID_UNDERLINE DRAW_STIPPLED_UNDERLINE DRAW_SQUIGGLY_UNDERLINE NO_UNDO
        HIDDEN OP_EQUAL OP_NOT_EQUAL OP_REGEX_MATCH OP_NOT_REGEX_MATCH
        OP_REGEX_CONTAINS OP_NOT_REGEX_CONTAINS CLASS_WORD_START CLASS_WORD_END
        CLASS_PUNCTUATION_START CLASS_PUNCTUATION_END CLASS_SUB_WORD_START
        CLASS_SUB_WORD_END CLASS_LINE_START CLASS_LINE_END CLASS_EMPTY_LINE
        INHIBIT_WORD_COMPLETIONS INHIBIT_EXPLICIT_COMPLETIONS DYNAMIC_COMPLETIONS
        INHIBIT_REORDER KIND_ID_AMBIGUOUS KIND_ID_KEYWORD KIND_ID_TYPE
        KIND_ID_FUNCTION KIND_ID_NAMESPACE KIND_ID_NAVIGATION KIND_ID_MARKUP
        KIND_ID_VARIABLE KIND_ID_SNIPPET SYMBOL_SOURCE_ANY SYMBOL_SOURCE_INDEX
        SYMBOL_SOURCE_OPEN_FILES SYMBOL_TYPE_ANY SYMBOL_TYPE_DEFINITION
        SYMBOL_TYPE_REFERENCE DIALOG_CANCEL DIALOG_YES DIALOG_NO UI_ELEMENT_SIDE_BAR
        UI_ELEMENT_MINIMAP UI_ELEMENT_TABS UI_ELEMENT_STATUS_BAR UI_ELEMENT_MENU
        UI_ELEMENT_OPEN_FILES LAYOUT_INLINE LAYOUT_BELOW LAYOUT_BLOCK
        """)),
    "sublime_plugin": set(_w("""
        ApplicationCommand WindowCommand TextCommand EventListener ViewEventListener
        TextChangeListener CommandInputHandler TextInputHandler ListInputHandler
        BackInputHandler
        """)),
    "Window": set(_w("""
        id is_valid hwnd active_sheet active_view new_html_sheet run_command new_file
        open_file find_open_file file_history num_groups active_group focus_group
        focus_sheet focus_view select_sheets bring_to_front get_sheet_index
        get_view_index set_sheet_index set_view_index move_sheets_to_group sheets
        views selected_sheets selected_sheets_in_group active_sheet_in_group
        active_view_in_group sheets_in_group views_in_group transient_sheet_in_group
        transient_view_in_group promote_sheet layout get_layout set_layout
        create_output_panel find_output_panel destroy_output_panel active_panel
        panels get_output_panel show_input_panel show_quick_panel is_sidebar_visible
        set_sidebar_visible is_minimap_visible set_minimap_visible
        is_status_bar_visible set_status_bar_visible get_tabs_visible
        set_tabs_visible is_menu_visible set_menu_visible folders project_file_name
        project_data set_project_data workspace_file_name settings template_settings
        symbol_locations lookup_symbol_in_index lookup_symbol_in_open_files
        lookup_references_in_index lookup_references_in_open_files
        extract_variables status_message
        """)),
    "View": set(_w("""
        id buffer_id buffer sheet_id sheet element is_valid is_primary window clones
        file_name close retarget name set_name reset_reference_document
        set_reference_document is_loading is_dirty is_read_only set_read_only
        is_scratch set_scratch encoding set_encoding line_endings set_line_endings
        size begin_edit end_edit is_in_edit insert erase replace change_count
        change_id transform_region_from run_command sel substr find find_all
        settings meta_info extract_tokens_with_scopes extract_scope expand_to_scope
        scope_name context_backtrace match_selector score_selector find_by_selector
        style style_for_scope indented_region indentation_level
        has_non_empty_selection_region lines split_by_newlines line full_line word
        classify find_by_class expand_by_class rowcol rowcol_utf8 rowcol_utf16
        text_point text_point_utf8 text_point_utf16 visible_region show
        show_at_center viewport_position set_viewport_position viewport_extent
        layout_extent text_to_layout text_to_window layout_to_text layout_to_window
        window_to_layout window_to_text line_height em_width is_folded
        folded_regions fold unfold add_regions get_regions erase_regions
        add_phantom erase_phantoms erase_phantom_by_id query_phantom query_phantoms
        assign_syntax set_syntax_file syntax symbols get_symbols indexed_symbols
        indexed_references symbol_regions indexed_symbol_regions set_status
        get_status erase_status extract_completions find_all_results
        find_all_results_with_text command_history overwrite_status
        set_overwrite_status show_popup_menu show_popup update_popup
        is_popup_visible hide_popup is_auto_complete_visible
        preserve_auto_complete_on_focus_lost export_to_html clear_undo_stack
        """)),
    "Region": set(_w("a b xpos to_tuple empty begin end size contains cover "
                     "intersection intersects")),
    "Selection": set(_w("is_valid clear add add_all subtract contains")),
    "Settings": set(_w("to_dict setdefault update get has set erase add_on_change "
                       "clear_on_change")),
    "Syntax": set(_w("path name hidden scope")),
    "Phantom": set(_w("region content layout on_navigate id to_tuple")),
    "Edit": set(),
}

# Methods Sublime calls on an EventListener (each also has an _async twin
# where Sublime offers one).
EVENTS = set(_w("""
    on_init on_exit on_new on_new_async on_associate_buffer on_associate_buffer_async
    on_clone on_clone_async on_load on_load_async on_reload on_reload_async
    on_revert on_revert_async on_pre_move on_post_move on_post_move_async
    on_pre_close on_close on_pre_save on_pre_save_async on_post_save
    on_post_save_async on_modified on_modified_async on_selection_modified
    on_selection_modified_async on_activated on_activated_async on_deactivated
    on_deactivated_async on_query_context on_query_completions on_hover
    on_text_command on_window_command on_post_text_command on_post_window_command
    on_new_window on_new_window_async on_pre_close_window on_new_project
    on_new_project_async on_load_project on_load_project_async on_pre_save_project
    on_post_save_project on_post_save_project_async on_pre_close_project
    """))

# Methods Sublime calls on a command.
COMMAND_METHODS = set(_w("run is_enabled is_visible is_checked description "
                         "want_event input input_description name"))

# Module-level hooks Sublime calls.
MODULE_HOOKS = {"plugin_loaded", "plugin_unloaded"}

# What calls and names evaluate to. Names that by convention hold a type
# (the plugin's own style: a view is always called ``view`` and so on).
NAME_TYPES = {"view": "View", "active": "View", "window": "Window",
              "selection": "Selection", "settings": "Settings", "region": "Region",
              "syntax": "Syntax", "edit": "Edit"}
SELF_ATTR_TYPES = {"view": "View", "window": "Window"}
RETURNS = {
    ("View", "window"): "Window", ("View", "settings"): "Settings",
    ("View", "sel"): "Selection", ("View", "line"): "Region",
    ("View", "full_line"): "Region", ("View", "syntax"): "Syntax",
    ("Window", "active_view"): "View", ("Window", "new_file"): "View",
    ("Window", "open_file"): "View", ("Window", "find_open_file"): "View",
    ("Window", "views"): "list:View", ("Window", "settings"): "Settings",
    ("sublime", "load_settings"): "Settings", ("sublime", "Region"): "Region",
    ("sublime", "find_syntax_for_file"): "Syntax", ("sublime", "windows"): "list:Window",
    ("sublime", "active_window"): "Window",
}
FUNCTION_RETURNS = {"_find_window": "Window", "_find_view": "View",
                    "_settings": "Settings"}


class ApiScanner(ast.NodeVisitor):
    """Finds attribute uses on Sublime objects in a module's source."""

    def __init__(self):
        self.uses = []          # (type, attribute, line)
        self.scopes = [{}]

    def type_of(self, node):
        if isinstance(node, ast.Name):
            if node.id in ("sublime", "sublime_plugin"):
                return node.id
            for scope in reversed(self.scopes):
                if node.id in scope:
                    return scope[node.id]
            return NAME_TYPES.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self":
            return SELF_ATTR_TYPES.get(node.attr)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                return RETURNS.get((self.type_of(func.value), func.attr))
            if isinstance(func, ast.Name):
                return FUNCTION_RETURNS.get(func.id)
        if isinstance(node, ast.Subscript):
            base = self.type_of(node.value)
            if base == "Selection":
                return "Region"
            if base and base.startswith("list:"):
                return base[5:]
        return None

    def bind(self, target, kind):
        if isinstance(target, ast.Name) and kind:
            self.scopes[-1][target.id] = kind

    def visit_FunctionDef(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    visit_Lambda = visit_FunctionDef

    def visit_Assign(self, node):
        self.visit(node.value)
        kind = self.type_of(node.value)
        for target in node.targets:
            self.bind(target, kind)
            self.visit(target)

    def visit_For(self, node):
        self.visit(node.iter)
        kind = self.type_of(node.iter)
        if kind and kind.startswith("list:"):
            self.bind(node.target, kind[5:])
        for child in node.body + node.orelse:
            self.visit(child)

    def visit_Attribute(self, node):
        kind = self.type_of(node.value)
        if kind in DOCUMENTED:
            self.uses.append((kind, node.attr, node.lineno))
        self.generic_visit(node)


def scan(source):
    scanner = ApiScanner()
    scanner.visit(ast.parse(source))
    return scanner.uses


def undocumented(uses):
    return sorted({"%s.%s (line %d)" % (k, a, line) for k, a, line in uses
                   if a not in DOCUMENTED[k]})


def plugin_source():
    with open(os.path.join(support.PACKAGE_DIR, "plugin.py"), encoding="utf-8") as f:
        return f.read()


class ApiSurfaceTest(unittest.TestCase):

    def test_every_sublime_api_the_plugin_uses_is_documented(self):
        uses = scan(plugin_source())
        self.assertEqual(undocumented(uses), [])
        kinds = {k for k, _, _ in uses}
        # The scan saw the plugin's real work, not just a couple of names.
        self.assertTrue({"sublime", "sublime_plugin", "View", "Window", "Settings",
                         "Selection", "Region", "Syntax"} <= kinds, kinds)
        self.assertGreater(len(uses), 80)

    def test_the_scan_catches_a_misspelt_or_invented_api(self):
        snippet = (
            "import sublime\n"
            "def f(view):\n"
            "    view.set_reference_doc('x')\n"
            "    w = view.window()\n"
            "    w.open_terminal()\n"
            "    for v in w.views():\n"
            "        v.settings().fetch('k')\n"
            "    sublime.set_timeout_ui(f)\n"
            "    view.sel()[0].start()\n")
        self.assertEqual(undocumented(scan(snippet)), [
            "Region.start (line 9)", "Settings.fetch (line 7)",
            "View.set_reference_doc (line 3)",
            "Window.open_terminal (line 5)", "sublime.set_timeout_ui (line 8)"])

    def test_event_handlers_and_command_methods_are_ones_sublime_calls(self):
        tree = ast.parse(plugin_source())
        problems = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if node.name.startswith("plugin_") and node.name not in MODULE_HOOKS:
                    problems.append("module hook %s" % node.name)
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.attr for b in node.bases if isinstance(b, ast.Attribute)}
            methods = [m.name for m in node.body if isinstance(m, ast.FunctionDef)
                       and not m.name.startswith("_")]
            if "EventListener" in bases:
                problems += ["%s.%s" % (node.name, m) for m in methods if m not in EVENTS]
            elif bases & {"TextCommand", "WindowCommand", "ApplicationCommand"}:
                if not node.name.endswith("Command"):
                    problems.append("%s: command classes end in Command" % node.name)
                problems += ["%s.%s" % (node.name, m) for m in methods
                             if m not in COMMAND_METHODS]
        self.assertEqual(problems, [])

    def test_the_stand_in_modules_offer_only_documented_api(self):
        sublime, sublime_plugin = support.fake_modules()
        helpers = {"state", "pump", "run_until", "pending_callbacks", "new_window",
                   "add_window", "PLAIN_TEXT"}
        extra = [n for n in vars(sublime) if not n.startswith("_")
                 and n not in DOCUMENTED["sublime"] and n not in helpers
                 and not isinstance(getattr(sublime, n), type(os))]
        self.assertEqual(extra, [])
        view_helpers = {"user_select", "user_type", "user_save_as", "user_replace_all", "text",
                        "phantoms", "reference_document", "undo_cleared",
                        "commands_run", "close_prompts"}
        window_helpers = {"user_add_folder", "user_close", "commands_run", "status"}
        for cls, allowed in ((sublime.View, view_helpers), (sublime.Window, window_helpers)):
            names = [n for n in dir(cls) if not n.startswith("_")]
            bad = [n for n in names if n not in DOCUMENTED[cls.__name__] and n not in allowed]
            self.assertEqual(bad, [], cls.__name__)
        for cls in (sublime.Region, sublime.Selection, sublime.Settings):
            bad = [n for n in dir(cls) if not n.startswith("_")
                   and n not in DOCUMENTED[cls.__name__]]
            self.assertEqual(bad, [], cls.__name__)


if __name__ == "__main__":
    unittest.main()
