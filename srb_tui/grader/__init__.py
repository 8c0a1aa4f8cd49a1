"""srb_tui.grader"""
