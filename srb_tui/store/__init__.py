"""srb_tui.store"""
