"""srb_tui.service"""
