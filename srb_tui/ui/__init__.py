"""srb_tui.ui"""
