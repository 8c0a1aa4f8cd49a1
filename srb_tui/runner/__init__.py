"""srb_tui.runner"""
